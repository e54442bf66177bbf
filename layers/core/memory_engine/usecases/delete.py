"""Delete a memory, or a dialog with the memories derived from it (cascade)."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.errors import NotFound
from memory_engine.extraction.batching import crossed_threshold, extraction_point
from memory_engine.models.api import DeleteRequest, DeleteResponse, DeleteResult
from memory_engine.models.deletes import DeleteIntent
from memory_engine.models.domain import Memory, is_memory_id
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import RemovalOutcome
from memory_engine.usecases import delete_intents, index_purge, removed_facts, thread_records


def run(engine: Engine, tenant: str, request: DeleteRequest) -> DeleteResponse:
    """A memory id deletes that memory; a dialog uuid deletes the turn and, if it was extracted,
    its memory, sending the memory's other turns back to the buffer to be extracted again. A
    session left without turns goes, and a thread left without sessions loses its character
    registry and statements record (`thread_records`). What a deleted memory's facts had
    replaced is reopened (`removed_facts`), before its removal. The delete is recorded before its
    first change and the record removed after its last (`delete_intents`): a delete whose process
    died between is finished by its retry, or else by the sweep."""
    intent: DeleteIntent | None
    if is_memory_id(request.dialog_uuid):
        outcome, intent = _delete_memory(engine, tenant, request)
    else:
        intent = _begin_dialog(engine, tenant, request)
        outcome = _delete_dialog(engine, tenant, request)
        removed_facts.forget(engine, tenant, outcome.thread, outcome.deleted_memories, outcome.removed)
        before = outcome.buffered_count - len(outcome.rebuffered_dialogs)
        point = extraction_point(engine.limits.extraction_threshold, engine.limits.batch_size)
        if crossed_threshold(before, outcome.buffered_count, point):
            engine.queue.send(ExtractionJob(tenant=tenant, session_uuid=request.session_uuid))
        # The session's last turn took the session: its thread's records go with its last one.
        thread_records.forget_ended(engine, tenant, [outcome])
    if outcome.deleted_memories:
        index_purge.delete(engine, tenant, outcome.deleted_memories)
    if intent is not None:
        engine.store.end_delete(intent)
    result = DeleteResult(
        deleted_memories=outcome.deleted_memories,
        deleted_dialogs=outcome.deleted_dialogs,
        rebuffered_dialogs=outcome.rebuffered_dialogs,
    )
    return DeleteResponse(message=_describe(result), data=result)


def _begin_dialog(engine: Engine, tenant: str, request: DeleteRequest) -> DeleteIntent | None:
    """A dialog delete's first steps, before its removal: the turn read, and the memory it is in;
    the delete recorded (`delete_intents`); what that memory replaced reopened while the turn still
    points at it (`removed_facts.forget_ahead`: a turn that was its session's last takes the
    session, and a retry would find no thread to repair). None, recording nothing, for an unknown
    turn (its delete is a 404)."""
    turn = engine.store.get_turn(tenant, request.session_uuid, request.dialog_uuid)
    if turn is None:
        return None
    memory = engine.store.get_memory(tenant, turn.memory_id) if turn.memory_id else None
    if memory is not None and memory.session_uuid != request.session_uuid:
        memory = None
    thread = ""
    if memory is None:  # a buffered turn: the thread is the session's, for its records if it goes
        session = engine.store.get_session(tenant, request.session_uuid)
        thread = "" if session is None else session.parent_session_uuid
    return _begin(engine, tenant, request, memory, thread)


def _begin(
    engine: Engine, tenant: str, request: DeleteRequest, memory: Memory | None, thread: str = ""
) -> DeleteIntent:
    """Record the delete (`delete_intents`), then reopen what `memory` replaced (none: nothing)."""
    intent = delete_intents.begin(
        engine,
        tenant,
        "engine",
        request.dialog_uuid,
        session_uuid=request.session_uuid,
        memory=memory,
        thread=thread,
    )
    if memory is not None:
        removed_facts.forget_ahead(engine, memory)
    return intent


def _delete_memory(
    engine: Engine, tenant: str, request: DeleteRequest
) -> tuple[RemovalOutcome, DeleteIntent]:
    memory = engine.store.get_memory(tenant, request.dialog_uuid)
    if memory is None or memory.session_uuid != request.session_uuid:
        if memory is None:
            # A retry of a delete that failed after its memory went: what it replaced is
            # reopened now (the thread's record still lists its statements), then the 404.
            removed_facts.forget_in_sessions(engine, tenant, {request.session_uuid: [request.dialog_uuid]})
        raise NotFound(
            f"No memory '{request.dialog_uuid}' in session '{request.session_uuid}'.",
            [{"field": "dialog_uuid", "message": "unknown memory id for this session"}],
        )
    # Before the removal, as a dialog delete's: a retry after a failure finds the memory and finishes.
    intent = _begin(engine, tenant, request, memory)
    outcome = engine.store.delete_memory(tenant, request.dialog_uuid)
    if memory.fields.key_facts:  # only key facts state what a later statement replaces
        removed_facts.forget(engine, tenant, memory.parent_session_uuid, [memory.memory_id], [memory])
    return outcome, intent


def _delete_dialog(engine: Engine, tenant: str, request: DeleteRequest) -> RemovalOutcome:
    try:
        return engine.store.delete_dialog(tenant, request.session_uuid, request.dialog_uuid)
    except NotFound:
        # A retry of a delete that failed after its turn went: what its memory replaced is
        # reopened now (the thread's record still lists the statements of a memory gone), then
        # the 404.
        removed_facts.forget_unstored(engine, tenant, request.session_uuid)
        raise


def _describe(result: DeleteResult) -> str:
    parts = []
    if result.deleted_dialogs:
        parts.append(f"{len(result.deleted_dialogs)} dialog(s)")
    if result.deleted_memories:
        parts.append(f"{len(result.deleted_memories)} memory(ies)")
    message = "deleted " + " and ".join(parts) if parts else "nothing deleted"
    if result.rebuffered_dialogs:
        message += f"; {len(result.rebuffered_dialogs)} dialog(s) returned to the buffer"
    return message
