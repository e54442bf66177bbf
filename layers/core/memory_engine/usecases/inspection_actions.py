"""The memory inspector's two actions that the public API does not spell directly.

- `delete_preview`: what DELETE /v1/engine/delete/ would remove and send back to the buffer,
  computed from reads only, so the page can ask for confirmation with the whole cascade shown.
- `force_extract`: queue the extraction of everything a session buffers now, as a consolidate
  with `force_summary` would, without having to send a turn.
"""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.errors import NotFound
from memory_engine.models.domain import TurnStatus, is_memory_id
from memory_engine.models.inspect import DeletePreview, ExtractResponse
from memory_engine.models.messages import ExtractionJob


def delete_preview(engine: Engine, tenant: str, session_uuid: str, dialog_uuid: str) -> DeletePreview:
    """The delete's outcome for these ids; raises NotFound where the delete would answer 404."""
    if is_memory_id(dialog_uuid):
        memory = engine.store.get_memory(tenant, dialog_uuid)
        if memory is None or memory.session_uuid != session_uuid:
            raise NotFound(
                f"No memory '{dialog_uuid}' in session '{session_uuid}'.",
                [{"field": "dialog_uuid", "message": "unknown memory id for this session"}],
            )
        turns = engine.store.list_turns(tenant, session_uuid)
        forgotten = [turn.dialog_uuid for turn in turns if turn.memory_id == dialog_uuid]
        return DeletePreview(
            deleted_memories=[dialog_uuid],
            deleted_dialogs=[],
            rebuffered_dialogs=[],
            forgotten_dialogs=forgotten,
        )
    if engine.store.get_session(tenant, session_uuid) is None:
        raise NotFound(
            f"No session '{session_uuid}' for this key; check session_uuid.",
            [{"field": "session_uuid", "message": "unknown session"}],
        )
    turns = engine.store.list_turns(tenant, session_uuid)
    turn = next((turn for turn in turns if turn.dialog_uuid == dialog_uuid), None)
    if turn is None:
        raise NotFound(
            f"Session '{session_uuid}' has no dialog '{dialog_uuid}'; send a dialog uuid of this session "
            "or a memory id.",
            [{"field": "dialog_uuid", "message": "unknown dialog for this session"}],
        )
    memory_id = turn.memory_id if turn.status is TurnStatus.EXTRACTED else None
    if memory_id is None:
        return DeletePreview(
            deleted_memories=[], deleted_dialogs=[dialog_uuid], rebuffered_dialogs=[], forgotten_dialogs=[]
        )
    siblings = [t.dialog_uuid for t in turns if t.memory_id == memory_id and t.dialog_uuid != dialog_uuid]
    exists = engine.store.get_memory(tenant, memory_id) is not None
    return DeletePreview(
        deleted_memories=[memory_id] if exists else [],
        deleted_dialogs=[dialog_uuid],
        rebuffered_dialogs=siblings,
        forgotten_dialogs=[],
    )


def force_extract(engine: Engine, tenant: str, session_uuid: str) -> ExtractResponse:
    """Queue a forced extraction of the session's buffered turns (the last short batch included)."""
    if engine.store.get_session(tenant, session_uuid) is None:
        raise NotFound(
            f"No session '{session_uuid}' for this key; list the threads to find one.",
            [{"field": "session_uuid", "message": "unknown session"}],
        )
    buffered = len(engine.store.buffered_turns(tenant, session_uuid))
    if buffered == 0:
        return ExtractResponse(message="nothing is buffered: no extraction queued", buffered=0)
    engine.queue.send(ExtractionJob(tenant=tenant, session_uuid=session_uuid, force=True))
    return ExtractResponse(message=f"extraction of {buffered} buffered turn(s) queued", buffered=buffered)
