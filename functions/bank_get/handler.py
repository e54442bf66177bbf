"""GET /v1/memories/{id} — one memory by name; GET /v1/memories/{id}/revisions — its history;
GET /v1/memories/{id}/keyFacts — an extracted memory's key facts, each with its history."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import BankMemory, ListKeyFactsResponse, ListRevisionsResponse
from memory_engine.usecases import bank, key_facts

app = build_resolver()


@app.get("/v1/memories/<memory_id>")
def get_memory(memory_id: str) -> BankMemory:
    return bank.get(wiring.engine(), tenant_of(app), memory_id)


@app.get("/v1/memories/<memory_id>/revisions")
def memory_revisions(memory_id: str) -> ListRevisionsResponse:
    return bank.revisions(wiring.engine(), tenant_of(app), memory_id)


@app.get("/v1/memories/<memory_id>/keyFacts")
def memory_key_facts(memory_id: str) -> ListKeyFactsResponse:
    return key_facts.list_key_facts(wiring.engine(), tenant_of(app), memory_id)


lambda_handler = lambda_entry(app)
