"""A live thread's newest facts, still buffered, are found as well as after extraction.

The persona thread (tests/fakes/persona_thread.py): two sessions extracted by the built-in
extractor, a fresh third session of 18 turns still buffered, each fact asked once with a
paraphrased question, limit 3, with the shipped embedder (multilingual-e5-small) and the local
index's exact search: the same answers on every run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.sqlite_store import SqliteStore
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.ports import Embedder
from memory_engine.settings import Settings
from memory_engine.usecases import consolidate, retrieve
from tests.fakes.engine import run_worker
from tests.fakes.persona_thread import THREADS, Thread, sessions
from tests.fakes.ports import ListQueue, StepClock

TENANT, THREAD = "acme", "persona"
LIMIT = 3


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return wiring.build_embedder(Settings(embedder="e5"))


def _engine(embedder: Embedder) -> Engine:
    return Engine(
        limits=Limits.of(Settings()),
        store=SqliteStore(":memory:"),
        queue=ListQueue(),
        index=LocalSearchIndex(),
        embedder=embedder,
        extractor=BuiltinExtractor(),
        clock=StepClock(),
    )


def _say(engine: Engine, thread: Thread, session: int, line: str, n: int, last: bool = False) -> None:
    request = {
        "session_uuid": f"S{session}",
        "parent_session_uuid": THREAD,
        "new_dialog": {"uuid": f"S{session}-d{n:02d}", "query": line, "answer": thread.ack},
        "user_name": thread.user,
        "language": thread.language,
        "options": {"force_summary": last},
    }
    consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    run_worker(engine)


def live_thread(embedder: Embedder, thread: Thread, extract_last: bool) -> tuple[Engine, dict[str, int]]:
    """The thread said turn by turn, the worker draining after each; with `extract_last` the
    last session is closed too (force_summary on its last turn). Returns the engine and each
    dialog's fact index."""
    engine = _engine(embedder)
    facts: dict[str, int] = {}
    all_sessions = sessions(thread)
    for number, turns in enumerate(all_sessions):
        for n, (line, fact) in enumerate(turns):
            last = extract_last and number == len(all_sessions) - 1 and n == len(turns) - 1
            _say(engine, thread, number, line, n, last)
            if fact is not None:
                facts[f"S{number}-d{n:02d}"] = fact
    return engine, facts


def found(engine: Engine, thread: Thread, facts: dict[str, int]) -> dict[int, bool]:
    """Each fact: whether a top-3 hit holds the turn that says it."""
    dialog_of = {fact: dialog for dialog, fact in facts.items()}
    out: dict[int, bool] = {}
    for index, fact in enumerate(thread.facts):
        request = RetrieveRequest.model_validate(
            {
                "parent_session_uuids": [THREAD],
                "user_input": {"query": fact.question},
                "options": {"limit": LIMIT},
            }
        )
        hits = retrieve.run(engine, TENANT, request).data
        out[index] = any(dialog_of[index] in hit.source_dialog_uuids for hit in hits)
    return out


@pytest.fixture(scope="module", params=sorted(THREADS))
def states(
    request: pytest.FixtureRequest, embedder: Embedder
) -> Iterator[tuple[Thread, dict[int, bool], dict[int, bool]]]:
    thread = THREADS[request.param]
    buffered, facts = live_thread(embedder, thread, extract_last=False)
    assert buffered.store.buffered_turns_in_threads(TENANT, [THREAD]), "the last session is still buffered"
    extracted, _ = live_thread(embedder, thread, extract_last=True)
    assert not extracted.store.buffered_turns_in_threads(TENANT, [THREAD])
    yield thread, found(buffered, thread, facts), found(extracted, thread, facts)


LAST_SESSION = range(10, 16)  # the facts said in the fresh session


def test_facts_of_a_fresh_buffered_session_are_found_as_often_as_after_extraction(
    states: tuple[Thread, dict[int, bool], dict[int, bool]],
) -> None:
    thread, buffered, extracted = states
    while_buffered = sum(buffered[i] for i in LAST_SESSION)
    after = sum(extracted[i] for i in LAST_SESSION)

    assert while_buffered >= after - 1, (thread.language, buffered, extracted)


def test_facts_of_extracted_sessions_stay_found_beside_a_buffered_session(
    states: tuple[Thread, dict[int, bool], dict[int, bool]],
) -> None:
    thread, buffered, extracted = states
    earlier = range(0, 10)

    assert sum(buffered[i] for i in earlier) >= sum(extracted[i] for i in earlier) - 1, (
        thread.language,
        buffered,
        extracted,
    )
