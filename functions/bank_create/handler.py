"""POST /v1/memories — store one fact under a scope."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import BankMemory, CreateMemoryRequest
from memory_engine.usecases import bank

app = build_resolver()


@app.post("/v1/memories")
def create_memory(body: CreateMemoryRequest) -> BankMemory:
    return bank.create(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
