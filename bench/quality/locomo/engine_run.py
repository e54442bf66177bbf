"""The engine's side of the benchmark, through its real path.

Every turn goes through the consolidate use case (dia_id as dialog uuid, speaker as user_name,
session date as timestamp; one engine session per LoCoMo session, the conversation as the memory
thread), the worker drains the queue after each turn as a prompt worker would, and every question
goes through the retrieve use case with limit 50. A hit stands for its matched turns (its
`evidence`, best first), then its other source turns in order.

No client flag is sent: the engine's own batching decides what is extracted. Every 20 buffered
turns queue a job (2 memories of 8 turns, the newest 4 wait), and the first turn of the next
session closes the earlier one (its 4–19 leftover turns become one last, shorter memory), so only
the last session of each conversation keeps turns buffered; they are scored as raw turns. A
variant may instead end each session with `force_summary` (`extract_all=True`, as a client closing
its sitting would), or turn the closing off (`close_sessions=False`): then each session's leftovers
stay buffered for good, over half of LoCoMo's turns since its sessions are short (14–47 turns).

Store and queue are the local SQLite adapters on a temporary file, the index is the local one,
the extractor is the built-in one (no LLM) and the embedder sits behind a cache (kept on disk
between runs, per model), so the baselines and every variant share one embedding of each text.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.quality.locomo.data import Conversation, Question, Session, Turn
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_queue import SqliteQueue
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.limits import Limits
from memory_engine.models.api import (
    ConsolidateOptions,
    ConsolidateRequest,
    NewDialog,
    RetrieveOptions,
    RetrieveRequest,
    UserInput,
)
from memory_engine.ports import Embedder, EmbedMode, Extractor
from memory_engine.retrieval.config import RetrievalConfig
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate, retrieve
from memory_engine_app import local_engine

TENANT = "locomo"
LIMIT = 50


class CachingEmbedder:
    """One model call per distinct (mode, text) within a run, and across runs with `path`.

    Models with query/passage instructions (e5) embed a text differently per mode, so the mode is
    part of the key. `path` (one file per model) keeps the vectors between runs, so tuning and
    reruns embed only what is new; `save` writes it. A slow model (EmbeddingGemma on CPU: over an
    hour for LoCoMo dev) embeds in chunks of `CHUNK` and writes the file every `save_every`
    seconds, so a crash or a stop loses minutes, not the run.
    """

    CHUNK = 16

    def __init__(self, inner: Embedder, path: Path | None = None, save_every: float = 120.0) -> None:
        self._inner = inner
        self._path = path
        self._save_every = save_every
        self._vectors: dict[tuple[str, str], list[float]] = {}
        self._seen_mtime = 0.0
        if path is not None and path.exists():
            self._vectors = _read(path)
            self._seen_mtime = path.stat().st_mtime
        self._fresh = 0
        self._saved_at = time.monotonic()

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        missing = list(dict.fromkeys(text for text in texts if (mode, text) not in self._vectors))
        for start in range(0, len(missing), self.CHUNK):
            chunk = missing[start : start + self.CHUNK]
            vectors = self._inner.embed(chunk, mode)
            self._vectors.update(((mode, text), vector) for text, vector in zip(chunk, vectors, strict=True))
            self._fresh += len(chunk)
            if time.monotonic() - self._saved_at >= self._save_every:
                self.save()
        return [self._vectors[mode, text] for text in texts]

    def save(self) -> None:
        """Write the vectors: merged with what another run wrote meanwhile (the cache is shared),
        to a temporary file renamed over the old one, so a crash mid-write keeps the last copy."""
        self._saved_at = time.monotonic()
        if self._path is None or not self._fresh:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        if self._path.exists() and self._path.stat().st_mtime != self._seen_mtime:
            for key, vector in _read(self._path).items():
                self._vectors.setdefault(key, vector)
        partial = self._path.with_name(f"{self._path.name}.{os.getpid()}.partial")
        with partial.open("wb") as out:
            pickle.dump(self._vectors, out)
        os.replace(partial, self._path)
        self._seen_mtime = self._path.stat().st_mtime
        self._fresh = 0


def _read(path: Path) -> dict[tuple[str, str], list[float]]:
    with path.open("rb") as saved:
        return {key: list(map(float, vector)) for key, vector in pickle.load(saved).items()}


def cache_name(settings: Settings) -> str:
    """The embedding cache's name for the configured embedder: an int8 graph gives vectors of its
    own (cosine ~0.995 to float32's), so it has a cache of its own."""
    int8 = settings.embedding_precision == "int8" and settings.embedder in {"e5", "minilm", "gemma"}
    name = f"{settings.embedder}-int8" if int8 else settings.embedder
    if settings.embedder == "gemma":
        from memory_engine.composition.providers.embedders import GemmaSettings

        dimension = GemmaSettings().gemma_dimension
        if dimension != 768:
            name += f"-{dimension}"  # a Matryoshka cut: vectors of another length
    return name


@dataclass(frozen=True)
class Hit:
    memory_id: str
    content: str
    dialogs: tuple[str, ...]
    evidence: tuple[str, ...] = ()  # the dialogs that matched, best first
    truncated: bool = False  # content cut to the evidence (options.max_tokens)


@dataclass(frozen=True)
class Variant:
    """One engine configuration of the run.

    `extract_all`: the client ends each session with force_summary; `close_sessions`: the engine
    setting `close_earlier_sessions`; `batch_size`: the engine setting of that name (turns per
    memory); `evidence_order` False: hits expand to their turns in
    source order, ignoring `evidence` (the protocol before hits ranked their turns).
    """

    name: str
    config: RetrievalConfig
    extract_all: bool = False
    close_sessions: bool = True
    evidence_order: bool = True  # False: a memory stands for its turns in source order (as before)
    batch_size: int = 8  # the engine setting `batch_size`: consecutive turns per memory


def build_engine(
    workdir: Path,
    embedder: Embedder,
    config: RetrievalConfig,
    extractor: Extractor | None = None,
    close_sessions: bool = True,
    batch_size: int = 8,
) -> Engine:
    database = workdir / "engine.sqlite3"
    return Engine(
        limits=Limits.of(Settings(close_earlier_sessions=close_sessions, batch_size=batch_size)),
        store=SqliteStore(database),
        queue=SqliteQueue(database),
        index=LocalSearchIndex(),
        embedder=embedder,
        extractor=extractor or BuiltinExtractor(),
        retrieval=config,
    )


def ingest(engine: Engine, conversation: Conversation, extract_all: bool, tick: Callable[[], None]) -> None:
    """Consolidate every turn in order, running the worker after each one."""
    queue = engine.queue
    assert isinstance(queue, SqliteQueue)
    worker = local_engine.local_worker(engine, sweep=False)
    for session in conversation.sessions:
        last = len(session.turns) - 1
        for position, turn in enumerate(session.turns):
            request = turn_request(conversation, session, turn, force=extract_all and position == last)
            consolidate.run(engine, TENANT, request)
            worker.drain()
            tick()


def turn_request(
    conversation: Conversation, session: Session, turn: Turn, force: bool = False
) -> ConsolidateRequest:
    """One LoCoMo turn as the consolidate call the protocol makes of it (`force`: force_summary)."""
    return ConsolidateRequest(
        session_uuid=f"{conversation.sample_id}:S{session.number}",
        parent_session_uuid=conversation.sample_id,
        new_dialog=NewDialog(uuid=turn.dia_id, query=turn.said(), answer="", timestamp=session.date),
        user_name=turn.speaker,
        language="en",
        options=ConsolidateOptions(force_summary=force),
    )


def ask(engine: Engine, question: Question, max_tokens: int | None = None) -> list[Hit]:
    request = RetrieveRequest(
        parent_session_uuids=[question.sample_id],
        user_input=UserInput(query=question.question),
        options=RetrieveOptions(limit=LIMIT, max_tokens=max_tokens),
    )
    response = retrieve.run(engine, TENANT, request)
    return [
        Hit(
            hit.memory_id,
            hit.content,
            tuple(hit.source_dialog_uuids),
            tuple(turn.dialog_uuid for turn in hit.evidence),
            hit.truncated,
        )
        for hit in response.data
    ]


def expand(hits: Sequence[Hit], evidence_order: bool = True) -> list[str]:
    """The protocol's ranking: each hit's matched turns best first, then its other turns in their
    order (a hit cut to its evidence: the evidence alone), repeats dropped."""
    ranked: list[str] = []
    for hit in hits:
        if hit.truncated:
            ranked += hit.evidence
        else:
            ranked += [*hit.evidence, *hit.dialogs] if evidence_order else hit.dialogs
    return list(dict.fromkeys(ranked))


def hits_covering(hits: Sequence[Hit], depth: int) -> list[Hit]:
    """The first hits whose turns fill the first `depth` places of the ranking."""
    seen: set[str] = set()
    chosen: list[Hit] = []
    for hit in hits:
        if len(seen) >= depth:
            break
        chosen.append(hit)
        seen.update(hit.dialogs)
    return chosen
