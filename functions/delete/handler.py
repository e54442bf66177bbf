"""DELETE /v1/engine/delete/ — a memory, or a dialog with its memories in cascade."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.api import DeleteRequest, DeleteResponse
from memory_engine.usecases import delete

app = build_resolver()


@app.delete("/v1/engine/delete/")
def delete_memory_or_dialog(body: DeleteRequest) -> DeleteResponse:
    return delete.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
