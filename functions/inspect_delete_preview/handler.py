"""GET /v1/inspect/delete-preview?session_uuid=&dialog_uuid= — what a delete would remove and re-buffer."""

from memory_engine.composition import wiring
from memory_engine.edge.http import QueryId, build_resolver, lambda_entry, tenant_of
from memory_engine.models.inspect import DeletePreview
from memory_engine.usecases import inspection_actions

app = build_resolver()


@app.get("/v1/inspect/delete-preview")
def preview_delete(session_uuid: QueryId, dialog_uuid: QueryId) -> DeletePreview:
    return inspection_actions.delete_preview(wiring.engine(), tenant_of(app), session_uuid, dialog_uuid)


lambda_handler = lambda_entry(app)
