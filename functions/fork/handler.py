"""POST /v1/engine/fork-delete/ — branch a session at a cutoff dialog."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.api import ForkRequest, ForkResponse
from memory_engine.usecases import fork

app = build_resolver()


@app.post("/v1/engine/fork-delete/")
def fork_session(body: ForkRequest) -> ForkResponse:
    return fork.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
