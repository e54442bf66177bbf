"""The reader/writer lock around the local index: reads side by side, a write alone."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from memory_engine.adapters.local.locked import LockedIndex, ReadWriteLock
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.ports import IndexDocument


def test_two_readers_hold_the_lock_at_once() -> None:
    lock = ReadWriteLock()
    inside = threading.Barrier(2, timeout=5)

    def read() -> None:
        with lock.reading():
            inside.wait()  # both readers must be inside together to pass

    threads = [threading.Thread(target=read) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert not inside.broken


def test_a_writer_waits_for_readers_and_new_readers_wait_for_a_waiting_writer() -> None:
    lock = ReadWriteLock()
    order: list[str] = []
    with lock.reading():
        writer = threading.Thread(target=lambda: _hold(lock.writing, order, "write"))
        writer.start()
        while not lock._writers_waiting:  # the writer is queued behind this reader
            time.sleep(0.001)
        late_reader = threading.Thread(target=lambda: _hold(lock.reading, order, "late read"))
        late_reader.start()
        time.sleep(0.05)
        order.append("first read ends")
    writer.join(5)
    late_reader.join(5)
    assert order == ["first read ends", "write", "late read"]


def _hold(section: object, order: list[str], name: str) -> None:
    with section():  # type: ignore[operator]
        order.append(name)


def test_methods_beyond_the_port_pass_through_the_wrapper() -> None:
    index = LockedIndex(LocalSearchIndex())
    doc = IndexDocument(
        tenant="t",
        doc_id="d1",
        session_uuid="s",
        thread="th",
        text="pepper the cat",
        vector=[1.0, 0.0],
        source_dialog_uuids=["d1"],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    index.upsert([doc])
    found = index.get("t", "d1")
    assert found is not None and found.text == "pepper the cat"
    assert len(index) == 1
