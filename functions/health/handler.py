"""GET /v1/engine/health/ — liveness, no auth, touches no dependency."""

from memory_engine.edge.http import build_resolver, lambda_entry
from memory_engine.models.api import HealthResponse

app = build_resolver()


@app.get("/v1/engine/health/")
def health() -> HealthResponse:
    return HealthResponse()


lambda_handler = lambda_entry(app)
