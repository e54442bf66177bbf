"""PATCH /v1/memories/{id} — correct a fact's wording or retire it, keeping its history;
PATCH /v1/memories/{id}/keyFacts/{index} — the same for one key fact of an extracted memory."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import BankMemory, KeyFactView, PatchMemoryRequest
from memory_engine.usecases import bank, key_facts

app = build_resolver()


@app.patch("/v1/memories/<memory_id>")
def patch_memory(memory_id: str, body: PatchMemoryRequest) -> BankMemory:
    return bank.patch(wiring.engine(), tenant_of(app), memory_id, body)


@app.patch("/v1/memories/<memory_id>/keyFacts/<index>")
def patch_key_fact(memory_id: str, index: int, body: PatchMemoryRequest) -> KeyFactView:
    return key_facts.patch_key_fact(wiring.engine(), tenant_of(app), memory_id, index, body)


lambda_handler = lambda_entry(app)
