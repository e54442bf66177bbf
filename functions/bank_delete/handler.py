"""DELETE /v1/memories/{id} — delete one memory."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.bank import DeleteMemoryResponse
from memory_engine.usecases import bank

app = build_resolver()


@app.delete("/v1/memories/<memory_id>")
def delete_memory(memory_id: str) -> DeleteMemoryResponse:
    return bank.delete(wiring.engine(), tenant_of(app), memory_id)


lambda_handler = lambda_entry(app)
