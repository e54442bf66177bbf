"""The local index's one lock: reads side by side, a write alone, the writing thread let back in."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

from memory_engine.adapters.local.locked import ReadWriteLock
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


def test_the_writing_thread_reads_and_writes_again_without_waiting_for_itself() -> None:
    # Given a thread holding the lock to write (a bulk write)
    lock = ReadWriteLock()
    done = threading.Event()

    def nested() -> None:
        with lock.writing(), lock.reading(), lock.writing():
            done.set()

    # When it reads and writes again inside
    thread = threading.Thread(target=nested)
    thread.start()
    thread.join(5)

    # Then it got through, and the lock is free for another writer afterwards
    assert done.is_set()
    other = threading.Thread(target=lambda: _hold(lock.writing, [], "other"))
    other.start()
    other.join(5)
    assert not other.is_alive()


def test_a_search_of_the_index_waits_while_a_write_holds_its_lock() -> None:
    # Given an index with one document, its lock held for writing by another thread
    index = LocalSearchIndex()
    index.upsert([_doc("d1")])
    order: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def write() -> None:
        with index.lock.writing():
            holding.set()
            release.wait(5)
            order.append("write ends")

    writer = threading.Thread(target=write)
    writer.start()
    holding.wait(5)

    # When a search starts meanwhile
    reader = threading.Thread(
        target=lambda: order.append(f"search found {len(index.search('t', ['th'], 'pepper', [1.0, 0.0], 5))}")
    )
    reader.start()
    time.sleep(0.05)
    release.set()
    writer.join(5)
    reader.join(5)

    # Then it answers after the write, not during it
    assert order == ["write ends", "search found 1"]


def _hold(section: object, order: list[str], name: str) -> None:
    with section():  # type: ignore[operator]
        order.append(name)


def _doc(doc_id: str) -> IndexDocument:
    return IndexDocument(
        tenant="t",
        doc_id=doc_id,
        session_uuid="s",
        thread="th",
        text="pepper the cat",
        vector=[1.0, 0.0],
        source_dialog_uuids=[doc_id],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
