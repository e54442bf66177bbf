"""POST /v1/engine/embed/ — embeddings from the engine's model."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.api import EmbedRequest, EmbedResponse
from memory_engine.usecases import embed

app = build_resolver()


@app.post("/v1/engine/embed/")
def embed_text(body: EmbedRequest) -> EmbedResponse:
    tenant_of(app)  # authenticated route: the tenant must be known even though nothing is stored
    return embed.run(wiring.engine(), body)


lambda_handler = lambda_entry(app)
