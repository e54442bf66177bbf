"""Fork a session at a cutoff dialog: the branch keeps only what was remembered before it."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, NotFound
from memory_engine.models.api import ForkRequest, ForkResponse, ForkResult
from memory_engine.models.domain import Memory, Session, Turn, TurnStatus, new_memory_id
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import ForkPlan
from memory_engine.usecases.batching import extraction_point
from memory_engine.usecases.indexing import index_stored


def run(engine: Engine, tenant: str, request: ForkRequest) -> ForkResponse:
    """Copy the turns up to and including the cutoff and the memories wholly before it.

    A memory that spans the cutoff is not copied: its kept turns go to the target's buffer.
    The source is not changed.
    """
    plan = plan_fork(engine, tenant, request)
    engine.store.create_fork(plan)
    index_stored(engine.store, engine.index, plan.memories, engine.retrieval, plan.turns)
    buffered = [turn.dialog_uuid for turn in plan.turns if turn.status is TurnStatus.BUFFERED]
    if len(buffered) >= extraction_point(engine.settings.extraction_threshold, engine.settings.batch_size):
        engine.queue.send(ExtractionJob(tenant=tenant, session_uuid=plan.target.session_uuid))
    result = ForkResult(
        target_session_uuid=plan.target.session_uuid,
        target_parent_session_uuid=plan.target.parent_session_uuid,
        copied_dialogs=len(plan.turns),
        copied_memories=[memory.memory_id for memory in plan.memories],
        buffered_dialogs=buffered,
    )
    message = f"forked {len(plan.turns)} dialog(s) and {len(plan.memories)} memory(ies)"
    return ForkResponse(message=message, data=result)


def plan_fork(engine: Engine, tenant: str, request: ForkRequest) -> ForkPlan:
    store = engine.store
    source = store.get_session(tenant, request.source_session_uuid)
    if source is None:
        raise NotFound(
            f"No session '{request.source_session_uuid}'.",
            [{"field": "source_session_uuid", "message": "unknown session"}],
        )
    if store.get_session(tenant, request.target_session_uuid) is not None:
        raise Conflict(
            f"Session '{request.target_session_uuid}' already exists: fork into a new session uuid.",
            [{"field": "target_session_uuid", "message": "already exists"}],
        )
    turns = store.list_turns(tenant, source.session_uuid)
    cutoff = next((turn for turn in turns if turn.dialog_uuid == request.cutoff_dialog_uuid), None)
    if cutoff is None:
        raise NotFound(
            f"No dialog '{request.cutoff_dialog_uuid}' in session '{source.session_uuid}'.",
            [{"field": "cutoff_dialog_uuid", "message": "unknown dialog in the source session"}],
        )
    now = engine.clock.now()
    target = Session(
        tenant=tenant,
        session_uuid=request.target_session_uuid,
        parent_session_uuid=request.target_parent_session_uuid or request.target_session_uuid,
        user_name=source.user_name,
        language=source.language,
        created_at=now,
        next_seq=cutoff.seq + 1,
    )
    kept = {turn.dialog_uuid: turn for turn in turns if turn.seq <= cutoff.seq}
    copies: dict[str, Memory] = {}
    for memory in store.list_memories(tenant, source.session_uuid):
        if _wholly_kept(memory, kept):
            copies[memory.memory_id] = memory.model_copy(
                update={
                    "memory_id": new_memory_id(now),
                    "session_uuid": target.session_uuid,
                    "parent_session_uuid": target.parent_session_uuid,
                    "created_at": now,
                    "metadata": {**memory.metadata, "forked_from": memory.memory_id},
                }
            )
    return ForkPlan(
        target=target,
        turns=[_copy_turn(turn, target, copies) for turn in kept.values()],
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
