"""GET /v1/inspect/queue — the key's pending and dead jobs."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.inspect import QueueResponse
from memory_engine.usecases import inspection

app = build_resolver()


@app.get("/v1/inspect/queue")
def show_queue() -> QueueResponse:
    return inspection.queue(wiring.engine(), tenant_of(app))


lambda_handler = lambda_entry(app)
