"""GET /v1/models — OpenAI's model list: the chat route's default model (docs/api.md §4)."""

from memory_engine.edge.http import build_resolver, lambda_entry, openai_error_body, tenant_of
from memory_engine.models.chat import ModelList
from memory_engine.settings import ChatSettings, loaded
from memory_engine.usecases import chat_models

app = build_resolver(shape_error=openai_error_body)


@app.get("/v1/models")
def list_models() -> ModelList:
    tenant_of(app)  # no tenant, no answer (401), as on every authenticated route
    return chat_models.list_models(loaded(ChatSettings))


lambda_handler = lambda_entry(app)
