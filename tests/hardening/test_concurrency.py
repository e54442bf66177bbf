"""Races: 8 writers into one session over HTTP while the worker extracts; forks and deletes of one
session in parallel with extraction; and the fork's two reads overtaken by an extraction."""

from __future__ import annotations

import http.client
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memory_engine.errors import NotFound
from memory_engine.extraction.batching import extraction_point
from memory_engine.models.api import DeleteRequest, ForkRequest
from memory_engine.models.domain import Turn
from memory_engine.usecases import delete, fork
from tests.fakes.ports import EchoExtractor
from tests.fakes.stack import LOCAL_KEY, LocalStack, local_stack, serve_http
from tests.hardening.consistency import assert_consistent

TENANT, SESSION, THREAD = "local", "shared", "thread"
WRITERS, TURNS_EACH = 8, 200


# Generous: with both cores busy the worker drains 8 x 200 turns in minutes, not seconds (60 s
# timed out beside two CPU hogs); what is checked is the outcome, and pytest-timeout (300 s) ends
# a real hang.
def wait_until(condition: Callable[[], bool], seconds: float = 240) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def write_turns(base: str, writer: int) -> list[str]:
    """One client sending its turns one after another on a kept-alive connection."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {"Authorization": f"Bearer {LOCAL_KEY}", "Content-Type": "application/json"}
    accepted = []
    try:
        for n in range(TURNS_EACH):
            uuid = f"w{writer}-{n:03d}"
            body = {
                "session_uuid": SESSION,
                "parent_session_uuid": THREAD,
                "new_dialog": {"uuid": uuid, "query": f"writer {writer} says {n}", "answer": "ok"},
            }
            connection.request("POST", "/v1/engine/consolidate/", json.dumps(body), headers)
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                accepted.append(uuid)
    finally:
        connection.close()
    return accepted


def test_eight_writers_into_one_session_keep_every_turn_in_order_and_extract_each_batch_once(
    tmp_path: Path,
) -> None:
    extractor = EchoExtractor()
    with local_stack(tmp_path, extractor=extractor) as stack, serve_http(stack) as base:
        worker = stack.worker()
        worker.start()
        try:
            with ThreadPoolExecutor(WRITERS) as pool:
                accepted = list(pool.map(lambda writer: write_turns(base, writer), range(WRITERS)))
            wait_until(lambda: stack.queue.pending_count() == 0)
        finally:
            worker.stop()
        store = stack.engine.store
        turns = store.list_turns(TENANT, SESSION)
        memories = store.list_memories(TENANT, SESSION)

        assert [len(mine) for mine in accepted] == [TURNS_EACH] * WRITERS
        assert len(turns) == WRITERS * TURNS_EACH == len({turn.dialog_uuid for turn in turns})
        for writer, mine in enumerate(accepted):  # each writer's turns in the order it sent them
            assert [t.dialog_uuid for t in turns if t.dialog_uuid.startswith(f"w{writer}-")] == mine
        extracted = Counter(uuid for batch in extractor.batches for uuid in batch)
        assert set(extracted.values()) == {1}  # no turn went to the extractor twice
        assert len(extractor.batches) == len(memories) >= (WRITERS * TURNS_EACH - 20) // 8
        seq_of = {turn.dialog_uuid: turn.seq for turn in turns}
        for memory in memories:  # each memory is 8 consecutive turns of the session
            seqs = [seq_of[uuid] for uuid in memory.source_dialog_uuids]
            assert seqs == list(range(seqs[0], seqs[0] + 8))
        waiting = len(store.buffered_turns(TENANT, SESSION))
        assert waiting < extraction_point(20, 8)  # nothing is left stalled above the threshold
        assert_consistent(
            stack.engine, TENANT, [SESSION], {SESSION: [uuid for mine in accepted for uuid in mine]}
        )


def test_parallel_forks_deletes_and_extraction_never_leave_a_memory_over_a_missing_dialog(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)
    with local_stack(tmp_path) as stack:
        uuids = [f"d{n:03d}" for n in range(60)]
        for uuid in uuids:
            body = {
                "session_uuid": SESSION,
                "parent_session_uuid": THREAD,
                "new_dialog": {"uuid": uuid, "query": f"fact {uuid}"},
            }
            assert stack.call("POST", "/v1/engine/consolidate/", body)[0] == 200
        stack.drain()
        worker = stack.worker()
        worker.start()
        targets: list[str] = []

        # Use cases called from many threads at once, as concurrent Lambda invocations would
        # (the local server would serialise them; the store must not rely on that).
        def fork_at(n: int) -> str:
            request = ForkRequest(
                source_session_uuid=SESSION,
                target_session_uuid=f"fork-{n}",
                cutoff_dialog_uuid=rng.choice(uuids),
            )
            try:
                fork.run(stack.engine, TENANT, request)
            except NotFound:
                return "cutoff deleted first"
            targets.append(request.target_session_uuid)
            return "forked"

        def delete_one(uuid: str) -> str:
            delete.run(stack.engine, TENANT, DeleteRequest(session_uuid=SESSION, dialog_uuid=uuid))
            return "deleted"

        try:
            doomed = rng.sample(uuids, 30)
            with ThreadPoolExecutor(6) as pool:
                forks = [pool.submit(fork_at, n) for n in range(30)]
                deletes = [pool.submit(delete_one, uuid) for uuid in doomed]
                outcomes = [f.result() for f in forks + deletes]
            wait_until(lambda: stack.queue.pending_count() == 0)
        finally:
            worker.stop()

        assert outcomes.count("deleted") == 30 and targets
        survivors = [uuid for uuid in uuids if uuid not in doomed]
        assert_consistent(stack.engine, TENANT, [SESSION, *targets], {SESSION: survivors})


class ExtractsBetweenForkReads:
    """A store whose `list_memories` first lets the worker extract: the fork's turn read is then
    older than its memory read, as when the worker commits between the two."""

    def __init__(self, stack: LocalStack) -> None:
        self._stack = stack
        self._store = stack.engine.store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def list_memories(self, tenant: str, session_uuid: str) -> list[Any]:
        self._stack.drain()
        return self._store.list_memories(tenant, session_uuid)


def test_a_fork_overtaken_by_an_extraction_copies_no_memory_its_turns_do_not_name(
    stack: LocalStack,
) -> None:
    for n in range(20):
        body = {
            "session_uuid": SESSION,
            "parent_session_uuid": THREAD,
            "new_dialog": {"uuid": f"d{n:02d}", "query": f"q{n}"},
        }
        stack.call("POST", "/v1/engine/consolidate/", body)
    stack.engine.store = ExtractsBetweenForkReads(stack)  # type: ignore[assignment]
    request = ForkRequest(source_session_uuid=SESSION, target_session_uuid="branch", cutoff_dialog_uuid="d19")

    fork.run(stack.engine, TENANT, request)
    stack.engine.store = stack.engine.store._store  # type: ignore[attr-defined]
    stack.drain()

    assert len(stack.engine.store.list_memories(TENANT, SESSION)) == 2
    assert_consistent(stack.engine, TENANT, [SESSION, "branch"])
    branch_turns: list[Turn] = stack.engine.store.list_turns(TENANT, "branch")
    assert len(branch_turns) == 20
