"""POST /v1/inspect/extract — queue the extraction of everything a session buffers now."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.inspect import ExtractRequest, ExtractResponse
from memory_engine.usecases import inspection_actions

app = build_resolver()


@app.post("/v1/inspect/extract")
def force_extract(body: ExtractRequest) -> ExtractResponse:
    return inspection_actions.force_extract(wiring.engine(), tenant_of(app), body.session_uuid)


lambda_handler = lambda_entry(app)
