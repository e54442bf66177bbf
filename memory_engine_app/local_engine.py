"""The local server's engine and its in-process worker.

The engine is the configured one (`memory_engine.composition.wiring.assemble`) with the local index files
(`local_index`), installed in `wiring` so that every handler the server calls shares it.
"""

from __future__ import annotations

import dataclasses
from threading import Lock

from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.ports import CopyableEmbedder
from memory_engine.settings import get_settings
from memory_engine.usecases import jobs
from memory_engine.usecases import sweep as sweeping
from memory_engine_app.local_index import local_index
from memory_engine_app.turn_embedder import TurnEmbedder
from memory_engine_app.worker import LocalWorker

_lock = Lock()


def engine() -> Engine:
    """The process's engine: the one installed in `wiring` (by an earlier call, or by a test), else
    the configured one with the local index files, built and installed now."""
    with _lock:
        built = wiring.installed()
        if built is None:
            built = wiring.assemble(get_settings(), index=local_index)
            wiring.use(built)
        return built


def local_worker(
    built: Engine | None = None, sweep: bool = True, working: Engine | None = None
) -> LocalWorker:
    """The in-process worker over the engine's queue (the configured one by default): each job
    runs through `usecases.jobs.attempt` with the configured retries and backoff, and the worker
    sweeps for stuck buffers at start-up and every MEMORY_ENGINE_WORKER_SWEEP_SECONDS. `working`
    is the engine its jobs run with (`worker_engine`, made here when not given)."""
    target = built or engine()
    source = wiring.job_source(target)
    settings = get_settings()  # the local worker's own knobs: poll, sweep, priority, slots
    policy = jobs.RetryPolicy.of(target.limits)
    working = working or worker_engine(target)
    return LocalWorker(
        source,
        lambda message: jobs.attempt(working, source, message, policy),
        settings.worker_poll_seconds,
        target.limits.job_visibility_seconds,
        sweep=(lambda: sweeping.run(target)) if sweep else None,
        sweep_seconds=settings.worker_sweep_seconds,
        nice=settings.worker_nice,
        warm=(lambda: working.embedder.embed(["warm up"])) if working is not target else None,
        slots=settings.worker_slots,
    )


def turn_embedder(target: Engine, working: Engine) -> TurnEmbedder:
    """The background step that embeds each arriving turn (`turn_embedder`), with the worker's
    model copy and priority, told of arrivals by `target` (the engine the handlers share)."""
    embedder = TurnEmbedder(working, nice=get_settings().worker_nice)
    target.arrivals = embedder
    return embedder


def worker_engine(target: Engine) -> Engine:
    """The engine the local worker runs jobs with: the same store, queue, index and caches, and an
    in-process embedder's own copy of the model where it has one (`clone`), so that extraction's
    batches never queue on the threads that embed the requests' queries (the worker's copy loads
    when the worker thread starts, at its lower priority: one more ONNX Runtime session in
    memory, the tokenizer shared, ~160 MB)."""
    embedder = target.embedder
    copy = embedder.clone() if isinstance(embedder, CopyableEmbedder) else embedder
    return target if copy is target.embedder else dataclasses.replace(target, embedder=copy)
