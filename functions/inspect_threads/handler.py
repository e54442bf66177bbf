"""GET /v1/inspect/threads — the key's threads with their sessions, and the memory-bank scopes."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.inspect import ThreadsResponse
from memory_engine.usecases import inspection

app = build_resolver()


@app.get("/v1/inspect/threads")
def list_threads() -> ThreadsResponse:
    return inspection.threads(wiring.engine(), tenant_of(app))


lambda_handler = lambda_entry(app)
