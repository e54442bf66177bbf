"""POST /v1/engine/retrieve/ — the memories that matter for the next reply."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.api import RetrieveRequest, RetrieveResponse
from memory_engine.usecases import retrieve

app = build_resolver()


@app.post("/v1/engine/retrieve/")
def retrieve_memories(body: RetrieveRequest) -> RetrieveResponse:
    return retrieve.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
