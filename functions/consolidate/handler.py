"""POST /v1/engine/consolidate/ — append one turn to a session's buffer."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.api import ConsolidateRequest, ConsolidateResponse
from memory_engine.usecases import consolidate

app = build_resolver()


@app.post("/v1/engine/consolidate/")
def consolidate_turn(body: ConsolidateRequest) -> ConsolidateResponse:
    return consolidate.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
