"""Small builders for contract tests: records with sensible defaults, so a test states only what matters."""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from memory_engine.models.domain import Memory, MemoryFields, Session, Turn, TurnStatus
from memory_engine.models.messages import ExtractionJob, Job
from memory_engine.models.queue import DeadJob
from memory_engine.ports import ConsolidateOutcome, ForkPlan, Store

TENANT = "tenant-a"
OTHER_TENANT = "tenant-b"
SESSION = "session-1"
THREAD = "thread-1"
T0 = datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC)
# Values float32 holds exactly, so every backend gives back the very same list.
EMBEDDING = [0.5, -0.25, 1.0, 0.125]
# Small, so dead-lettering is quick to reach; conftest builds every queue backend with it.
MAX_RECEIVES = 3

_memory_serial = itertools.count(1)


def make_session(
    session_uuid: str = SESSION, *, tenant: str = TENANT, parent: str = THREAD, **overrides: Any
) -> Session:
    values: dict[str, Any] = {
        "tenant": tenant,
        "session_uuid": session_uuid,
        "parent_session_uuid": parent,
        "created_at": T0,
    }
    return Session(**(values | overrides))


def make_turn(
    dialog_uuid: str, *, session_uuid: str = SESSION, tenant: str = TENANT, **overrides: Any
) -> Turn:
    values: dict[str, Any] = {
        "tenant": tenant,
        "session_uuid": session_uuid,
        "dialog_uuid": dialog_uuid,
        "seq": 0,  # the store assigns the real one
        "query": f"오늘 뭐 했어? ({dialog_uuid})",
        "answer": f"공원에서 산책했어. ({dialog_uuid})",
        "timestamp": T0,
        "created_at": T0 + timedelta(seconds=1),
    }
    return Turn(**(values | overrides))


def stored_turn(store: Store, tenant: str, session_uuid: str, dialog_uuid: str) -> Turn | None:
    """The stored turn of that dialog, or None (read through `list_turns`: the port has no
    single-turn read, as no use case needs one)."""
    turns = store.list_turns(tenant, session_uuid)
    return next((turn for turn in turns if turn.dialog_uuid == dialog_uuid), None)


def append_turns(store: Store, session: Session, *dialog_uuids: str) -> list[ConsolidateOutcome]:
    """Consolidate one default turn per dialog uuid into `session`, in order."""
    return [
        store.append_turn(session, make_turn(uuid, session_uuid=session.session_uuid, tenant=session.tenant))
        for uuid in dialog_uuids
    ]


def make_memory(
    *dialog_uuids: str,
    session_uuid: str = SESSION,
    tenant: str = TENANT,
    parent: str = THREAD,
    first_seq: int = 0,
    **overrides: Any,
) -> Memory:
    """A memory over `dialog_uuids`, taken to be consecutive turns from `first_seq` on."""
    values: dict[str, Any] = {
        "tenant": tenant,
        "memory_id": f"20260318_040037_{next(_memory_serial):06x}",
        "session_uuid": session_uuid,
        "parent_session_uuid": parent,
        "fields": MemoryFields(
            summary="민수는 공원에서 산책했다.",
            keywords=["공원", "산책"],
            key_facts=["민수는 오늘 공원에 갔다"],
            key_dialogue=["민수: 공원에서 산책했어."],
            intent="하루를 공유하려 한다.",
            location="공원, 오후, 맑음",
            characters=["민수"],
        ),
        "source_dialog_uuids": list(dialog_uuids),
        "first_seq": first_seq,
        "last_seq": first_seq + max(len(dialog_uuids) - 1, 0),
        "embedding": EMBEDDING,
        "source_text": "\n".join(f"당신: 오늘 뭐 했어? ({uuid})" for uuid in dialog_uuids),
        "created_at": T0 + timedelta(minutes=5),
        "metadata": {"extractor": "builtin", "tokens": 42, "seconds": 0.5},
    }
    return Memory(**(values | overrides))


def make_fork_plan(target: str = "fork-1") -> ForkPlan:
    """A fork keeping d1..d3: a memory over d1-d2 (copied) and d3 back in the buffer."""
    session = make_session(target, parent=target)
    memory = make_memory("d1", "d2", session_uuid=target, parent=target, memory_id="20260318_050000_abcdef")
    turns = [
        make_turn("d1", session_uuid=target, seq=0, status=TurnStatus.EXTRACTED, memory_id=memory.memory_id),
        make_turn("d2", session_uuid=target, seq=1, status=TurnStatus.EXTRACTED, memory_id=memory.memory_id),
        make_turn("d3", session_uuid=target, seq=2),
    ]
    return ForkPlan(target=session, turns=turns, memories=[memory])


def make_job(session_uuid: str = SESSION, *, tenant: str = TENANT, force: bool = False) -> ExtractionJob:
    return ExtractionJob(tenant=tenant, session_uuid=session_uuid, force=force)


class Received(Protocol):
    @property
    def receipt(self) -> str: ...

    @property
    def job(self) -> Job: ...

    @property
    def receive_count(self) -> int: ...


class WorkQueue(Protocol):
    """What the queue contract drives: the `Queue` port plus the worker's consumer side."""

    def send(self, job: Job) -> None: ...

    def receive(self, max_messages: int = 1, visibility_seconds: float = 30) -> list[Any]: ...

    def ack(self, receipt: str) -> Any: ...

    def release(self, receipt: str) -> Any: ...

    def extend(self, receipt: str, visibility_seconds: float) -> bool: ...

    def dead_jobs(self) -> list[Job]: ...

    def pending_count(self) -> int: ...

    def retry_later(self, receipt: str, delay_seconds: float, error: str) -> Any: ...

    def bury(self, message: Any, error: str) -> None: ...

    def dead_letters(self) -> list[DeadJob]: ...

    def redrive(self, ids: Sequence[str] | None = None) -> list[DeadJob]: ...


class ManualClock:
    """Wall-clock seconds that move only when a test says (`advance`): visibility timeouts without sleeps."""

    def __init__(self) -> None:
        self.now = float(int(time.time()))

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def receive_one(queue: WorkQueue, visibility_seconds: float = 30) -> Received:
    """Receive exactly one message, failing the test when there is none or more."""
    received = queue.receive(1, visibility_seconds)
    assert len(received) == 1, f"expected one message, got {received}"
    message: Received = received[0]
    return message
