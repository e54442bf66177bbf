"""POST /v1/memories:retrieve (and /v1/memories/retrieve) — a scope's memories, nearest or paged."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import RetrieveMemoriesRequest, RetrieveMemoriesResponse
from memory_engine.usecases import bank_retrieve

app = build_resolver()


@app.post("/v1/memories:retrieve")
@app.post("/v1/memories/retrieve")
def retrieve_memories(body: RetrieveMemoriesRequest) -> RetrieveMemoriesResponse:
    return bank_retrieve.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
