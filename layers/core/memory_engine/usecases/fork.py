"""Fork a session at a cutoff dialog: the branch keeps only what was remembered before it.

A retry is told from a conflict by what the target holds (no provenance is stored). A fork's store
write may succeed while what follows it (the index write, the extraction job) fails: the client
gets 503 and retries into a target that now exists. The retry finishes the job when the target is
exactly the fork asked for, which needs no record of where the target came from:

- a fork copies the source's turns verbatim, `created_at` included, and that is stamped by the
  engine when a turn is consolidated (or recorded), so no session written turn by turn matches it;
- every copied memory names its original in `metadata.forked_from`, and memories come to a
  session only by a fork or by its own extraction (which writes no `forked_from`).

So a target is that fork when its thread, speaker and language are the request's, its turns are the
source's up to the cutoff (uuid, seq, words, times) and nothing was appended since, and each of its
memories is a copy of a distinct memory the source still holds. Anything else (another cutoff,
another thread, a session consolidated under that uuid, a target that has moved on) is a Conflict,
as is a source dialog or memory deleted between the two attempts.

The one look-alike is another fork, at the same cutoff, of a session sharing this source's history
(a sibling fork, or the source's own original) when no memory was copied: then the target already
holds exactly what this fork would write, and answering 200 for it is true.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, NotFound
from memory_engine.extraction.batching import extraction_point
from memory_engine.models.api import ForkRequest, ForkResponse, ForkResult
from memory_engine.models.domain import FORKED_FROM, Memory, Session, Turn, TurnStatus, new_memory_id
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import ForkPlan, Store
from memory_engine.usecases import index_purge, supersede


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
    """Everything after the store write: index the copies, record their statements, queue
    extraction if the buffer is full.

    All are idempotent, so a retry may run them again over the stored fork."""
    index_purge.index_written(engine, memories, turns)
    # The copies' statements join the target thread's record: later statements replace them.
    supersede.supersede_copies(engine, memories)
    buffered = [turn.dialog_uuid for turn in turns if turn.status is TurnStatus.BUFFERED]
    if len(buffered) >= extraction_point(engine.limits.extraction_threshold, engine.limits.batch_size):
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


_NOT_COPIED = {"tenant", "session_uuid", "status", "memory_id"}


def finished_fork(
    store: Store, source: Session, kept: Sequence[Turn], target: Session, thread: str
) -> tuple[list[Turn], list[Memory]] | None:
    """The target's turns and memories (in the source's memory order) when `target` is exactly the
    fork of `source` keeping `kept` (its turns up to the cutoff) into `thread`; else None."""
    if source.session_uuid == target.session_uuid or not kept:
        return None
    if (target.parent_session_uuid, target.user_name, target.language) != (
        thread,
        source.user_name,
        source.language,
    ):
        return None
    if target.next_seq != kept[-1].seq + 1:
        return None
    turns = store.list_turns(target.tenant, target.session_uuid)
    if [_copied(turn) for turn in turns] != [_copied(turn) for turn in kept]:
        return None
    order = {
        memory.memory_id: n
        for n, memory in enumerate(store.list_memories(source.tenant, source.session_uuid))
    }
    memories = store.list_memories(target.tenant, target.session_uuid)
    originals = [memory.metadata.get(FORKED_FROM) for memory in memories]
    if len(set(originals)) != len(originals) or not all(isinstance(o, str) and o in order for o in originals):
        return None
    return turns, sorted(memories, key=lambda memory: order[str(memory.metadata[FORKED_FROM])])


def _copied(turn: Turn) -> dict[str, object]:
    """What a fork copies unchanged: all of a turn but its session and its extraction state."""
    return turn.model_dump(exclude=_NOT_COPIED)
