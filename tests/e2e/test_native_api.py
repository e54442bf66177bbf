"""The issue's story end to end: a real server, the real model, the built-in extractor."""

from __future__ import annotations

import time

import pytest

from memory_engine.models.api import RetrievedMemory
from memory_engine_client import Conflict
from tests.e2e.conftest import LocalServer, wait_for, wait_on_work

pytestmark = pytest.mark.e2e

THREAD = "thread-e2e"
SESSION = "session-e2e"
LINES = {
    3: "My cat Mochi was born in Lisbon and loves sardines.",
    25: "Yesterday I booked a flight to Reykjavik for the aurora festival.",
}
FILLER = [
    "I spent the morning fixing the garden fence.",
    "The weather turned cold so I made pumpkin soup.",
    "Work was busy, we shipped the quarterly report.",
    "I started reading a novel about lighthouse keepers.",
    "My neighbour lent me a ladder for the roof.",
    "We watched an old film about submarines.",
    "I tried a new recipe with lentils and cumin.",
    "The train was late again this evening.",
]


def consolidate(
    server: LocalServer, n: int, session: str = SESSION, force_summary: bool | None = None
) -> None:
    text = LINES.get(n, FILLER[n % len(FILLER)] + f" (day {n})")
    server.client().consolidate(
        session,
        THREAD,
        {"uuid": f"turn-{n}", "query": text, "answer": "I see, tell me more."},
        user_name="Alex",
        language="en",
    )


def retrieve(
    server: LocalServer, query: str, threads: list[str] | None = None, limit: int = 5
) -> list[RetrievedMemory]:
    return server.client().retrieve(threads or [THREAD], query, limit=limit).data


def memories(server: LocalServer, threads: list[str] | None = None) -> list[RetrievedMemory]:
    return [hit for hit in retrieve(server, "day", threads, limit=50) if hit.kind == "memory"]


@pytest.fixture(scope="module")
def ingested(server: LocalServer) -> LocalServer:
    for n in range(1, 26):
        consolidate(server, n)
    # On the work, not the clock: as long as the session's job waits or runs (a loaded machine).
    wait_on_work(server, lambda: len(memories(server)) >= 2)
    # The one job may have found 24 turns buffered (3 batches) and still be writing the third
    # (seconds apart on a loaded machine): tests compare memory sets, so wait until the queue holds
    # no job, in flight or waiting.
    wait_on_work(server, lambda: _queue_empty(server))
    return server


def _unchanged_for(server: LocalServer, seconds: float) -> bool:
    before = {hit.memory_id for hit in memories(server)}
    time.sleep(seconds)
    return {hit.memory_id for hit in memories(server)} == before


def _queue_empty(server: LocalServer) -> bool:
    return not server.client().show_queue().pending


def test_twenty_five_turns_become_at_least_two_memories_within_seconds(ingested: LocalServer) -> None:
    found = memories(ingested)
    assert len(found) >= 2
    assert all(hit.memory_id.count("_") == 2 for hit in found)


def test_a_fact_from_turn_three_is_retrieved(ingested: LocalServer) -> None:
    hits = retrieve(ingested, "Where was Mochi the cat born?")
    assert any("turn-3" in hit.source_dialog_uuids for hit in hits)


def test_a_fact_still_buffered_in_the_last_turn_is_retrieved(ingested: LocalServer) -> None:
    hits = retrieve(ingested, "Where did I book a flight to?")
    assert "turn-25" in [hit.memory_id for hit in hits]


def test_fork_at_turn_twelve_keeps_only_earlier_memories_and_leaves_the_source(ingested: LocalServer) -> None:
    before = {hit.memory_id for hit in memories(ingested)}
    api = ingested.client()
    forked = api.fork(SESSION, "fork-e2e", "turn-12")
    target = memories(ingested, ["fork-e2e"])
    assert target, "the memory of turns 1-8 is copied"
    for hit in target:
        assert all(int(uuid.split("-")[1]) <= 12 for uuid in hit.source_dialog_uuids)
    assert {hit.memory_id for hit in memories(ingested)} == before
    # The same fork again is a retry: it answers as the first time; another cutoff is a conflict.
    assert api.fork(SESSION, "fork-e2e", "turn-12") == forked
    with pytest.raises(Conflict):
        api.fork(SESSION, "fork-e2e", "turn-11")


def test_deleting_an_extracted_dialog_removes_its_memory_and_rebuffers_the_rest(
    ingested: LocalServer,
) -> None:
    owner = next(hit for hit in memories(ingested) if "turn-5" in hit.source_dialog_uuids)
    deleted = ingested.client().delete(SESSION, "turn-5").data
    assert deleted.deleted_memories == [owner.memory_id]
    assert sorted(deleted.rebuffered_dialogs) == sorted(set(owner.source_dialog_uuids) - {"turn-5"})
    assert owner.memory_id not in {hit.memory_id for hit in memories(ingested)}
    # The re-buffered turns are still searchable as raw turns.
    hits = retrieve(ingested, "Mochi the cat born in Lisbon")
    assert "turn-3" in [hit.memory_id for hit in hits]


@pytest.mark.parametrize(
    ("raw", "status", "field"),
    [
        (b"{not json", 400, "body"),
        (b'{"parent_session_uuid": "t", "new_dialog": {"uuid": "x", "query": "q"}}', 422, "session_uuid"),
        (
            b'{"session_uuid": 7, "parent_session_uuid": "t", "new_dialog": {"uuid": "x", "query": "q"}}',
            422,
            "session_uuid",
        ),
        (
            b'{"session_uuid": "s", "parent_session_uuid": "t", "new_dialog": {"uuid": "x", "query": ["q"]}}',
            422,
            "new_dialog.query",
        ),
    ],
)
def test_bad_input_gets_a_4xx_naming_the_field(
    server: LocalServer, raw: bytes, status: int, field: str
) -> None:
    code, body = server.call("POST", "/v1/engine/consolidate/", raw=raw)
    assert code == status
    assert body["status"] == "error"
    assert field in [error["field"] for error in body["errors"]]


@pytest.mark.parametrize("key", [None, "wrong-key"])
def test_no_key_or_a_wrong_key_is_a_401(server: LocalServer, key: str | None) -> None:
    code, body = server.call(
        "POST",
        "/v1/engine/retrieve/",
        {"parent_session_uuids": [THREAD], "user_input": {"query": "x"}},
        key=key,
    )
    assert code == 401
    assert body["status"] == "error"


def test_everything_survives_a_restart(ingested: LocalServer) -> None:
    # Given the queue drained: an extraction job of the session can still be waiting here (seen on a
    # loaded machine), and its memory would then appear after the restart, beside what survived it
    wait_on_work(ingested, lambda: _queue_empty(ingested))
    wait_for(lambda: _unchanged_for(ingested, seconds=1.0))
    before_memories = {hit.memory_id for hit in memories(ingested)}
    before_buffered = [hit.memory_id for hit in retrieve(ingested, "flight to Reykjavik")]
    output = ingested.stop()
    assert "memory-engine stopped" in output
    ingested.start()
    assert {hit.memory_id for hit in memories(ingested)} == before_memories
    assert [hit.memory_id for hit in retrieve(ingested, "flight to Reykjavik")] == before_buffered
