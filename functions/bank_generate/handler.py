"""POST /v1/memories:generate (and /v1/memories/generate) — facts from events, merged into a scope."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import GenerateMemoriesRequest, GenerateMemoriesResponse
from memory_engine.usecases import bank_generate

app = build_resolver()


@app.post("/v1/memories:generate")
@app.post("/v1/memories/generate")
def generate_memories(body: GenerateMemoriesRequest) -> GenerateMemoriesResponse:
    return bank_generate.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
