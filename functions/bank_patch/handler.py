"""PATCH /v1/memories/{id} — correct a fact's wording or retire it, keeping its history."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import BankMemory, PatchMemoryRequest
from memory_engine.usecases import bank

app = build_resolver()


@app.patch("/v1/memories/<memory_id>")
def patch_memory(memory_id: str, body: PatchMemoryRequest) -> BankMemory:
    return bank.patch(wiring.engine(), tenant_of(app), memory_id, body)


lambda_handler = lambda_entry(app)
