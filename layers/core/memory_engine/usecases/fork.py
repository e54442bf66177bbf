"""Fork a session at a cutoff dialog: the branch keeps only what was remembered before it."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, NotFound
from memory_engine.models.api import ForkRequest, ForkResponse, ForkResult
from memory_engine.models.domain import Memory, Session, Turn, TurnStatus, new_memory_id
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import ForkPlan
from memory_engine.usecases.batching import extraction_point
from memory_engine.usecases.fork_retry import FORKED_FROM, finished_fork
from memory_engine.usecases.indexing import index_stored


def run(engine: Engine, tenant: str, request: ForkRequest) -> ForkResponse:
    """Copy the turns up to and including the cutoff and the memories wholly before it.

    A memory that spans the cutoff is not copied: its kept turns go to the target's buffer.
    The source is not changed. A retry of a fork whose store write landed but whose index write
    or job did not (a 503) finds the target already that fork: it finishes the job and answers
    as the first attempt would have. Any other existing target is a Conflict.
    """
    store = engine.store
    source, kept = _read_source(engine, tenant, request)
    thread = request.target_parent_session_uuid or request.target_session_uuid
    existing = store.get_session(tenant, request.target_session_uuid)
    if existing is None:
        plan = plan_fork(engine, source, kept, request.target_session_uuid, thread)
        try:
            store.create_fork(plan)
        except Conflict:
            # A twin of this request (the client's retry of one still running) may have won.
            existing = store.get_session(tenant, request.target_session_uuid)
            if existing is None:
                raise
        else:
            return _finish(engine, plan.target, plan.turns, plan.memories)
    found = finished_fork(store, source, kept, existing, thread)
    if found is None:
        raise _exists(request.target_session_uuid)
    return _finish(engine, existing, *found)


def _read_source(engine: Engine, tenant: str, request: ForkRequest) -> tuple[Session, list[Turn]]:
    """The source session and its turns up to and including the cutoff."""
    store = engine.store
    source = store.get_session(tenant, request.source_session_uuid)
    if source is None:
        raise NotFound(
            f"No session '{request.source_session_uuid}'.",
            [{"field": "source_session_uuid", "message": "unknown session"}],
        )
    turns = store.list_turns(tenant, source.session_uuid)
    cutoff = next((turn for turn in turns if turn.dialog_uuid == request.cutoff_dialog_uuid), None)
    if cutoff is None:
        if store.get_session(tenant, request.target_session_uuid) is not None:
            raise _exists(request.target_session_uuid)
        raise NotFound(
            f"No dialog '{request.cutoff_dialog_uuid}' in session '{source.session_uuid}'.",
            [{"field": "cutoff_dialog_uuid", "message": "unknown dialog in the source session"}],
        )
    return source, [turn for turn in turns if turn.seq <= cutoff.seq]


def _finish(engine: Engine, target: Session, turns: list[Turn], memories: list[Memory]) -> ForkResponse:
    """Everything after the store write: index the copies, queue extraction if the buffer is full.

    Both are idempotent, so a retry may run them again over the stored fork."""
    index_stored(engine.store, engine.index, memories, engine.retrieval, turns)
    buffered = [turn.dialog_uuid for turn in turns if turn.status is TurnStatus.BUFFERED]
    if len(buffered) >= extraction_point(engine.settings.extraction_threshold, engine.settings.batch_size):
        engine.queue.send(ExtractionJob(tenant=target.tenant, session_uuid=target.session_uuid))
    result = ForkResult(
        target_session_uuid=target.session_uuid,
        target_parent_session_uuid=target.parent_session_uuid,
        copied_dialogs=len(turns),
        copied_memories=[memory.memory_id for memory in memories],
        buffered_dialogs=buffered,
    )
    message = f"forked {len(turns)} dialog(s) and {len(memories)} memory(ies)"
    return ForkResponse(message=message, data=result)


def _exists(session_uuid: str) -> Conflict:
    return Conflict(
        f"Session '{session_uuid}' already exists: fork into a new session uuid.",
        [{"field": "target_session_uuid", "message": "already exists"}],
    )


def plan_fork(
    engine: Engine, source: Session, kept_turns: list[Turn], target_uuid: str, thread: str
) -> ForkPlan:
    now = engine.clock.now()
    target = Session(
        tenant=source.tenant,
        session_uuid=target_uuid,
        parent_session_uuid=thread,
        user_name=source.user_name,
        language=source.language,
        created_at=now,
        next_seq=kept_turns[-1].seq + 1,
    )
    kept = {turn.dialog_uuid: turn for turn in kept_turns}
    copies: dict[str, Memory] = {}
    for memory in engine.store.list_memories(source.tenant, source.session_uuid):
        if _wholly_kept(memory, kept):
            copies[memory.memory_id] = memory.model_copy(
                update={
                    "memory_id": new_memory_id(now),
                    "session_uuid": target.session_uuid,
                    "parent_session_uuid": target.parent_session_uuid,
                    "created_at": now,
                    "metadata": {**memory.metadata, FORKED_FROM: memory.memory_id},
                }
            )
    return ForkPlan(
        target=target,
        turns=[_copy_turn(turn, target, copies) for turn in kept_turns],
        memories=list(copies.values()),
    )


def _wholly_kept(memory: Memory, kept: dict[str, Turn]) -> bool:
    """True when every source turn of the memory is kept and, as read, points back at it.

    Turns and memories are two reads: an extraction or delete in between may have changed one but
    not the other. Only a memory both reads agree on is copied; its turns otherwise go to the
    target's buffer, so the fork never holds a memory over turns that do not name it.
    """
    return all(
        (turn := kept.get(uuid)) is not None
        and turn.status is TurnStatus.EXTRACTED
        and turn.memory_id == memory.memory_id
        for uuid in memory.source_dialog_uuids
    )


def _copy_turn(turn: Turn, target: Session, copies: dict[str, Memory]) -> Turn:
    status, memory_id = turn.status, None
    if turn.status is TurnStatus.EXTRACTED:
        copy = copies.get(turn.memory_id or "")
        # A turn whose memory spans the cutoff goes back to the buffer to be extracted anew.
        status, memory_id = (TurnStatus.EXTRACTED, copy.memory_id) if copy else (TurnStatus.BUFFERED, None)
    return turn.model_copy(
        update={"session_uuid": target.session_uuid, "status": status, "memory_id": memory_id}
    )
