"""GET /v1/memories/{id} — one memory by name."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import BankMemory
from memory_engine.usecases import bank

app = build_resolver()


@app.get("/v1/memories/<memory_id>")
def get_memory(memory_id: str) -> BankMemory:
    return bank.get(wiring.engine(), tenant_of(app), memory_id)


lambda_handler = lambda_entry(app)
