"""POST /v1/chat/completions — OpenAI Chat Completions with long-term memory by `userid`.

`stream: true` answers server-sent events: streamed where the runtime can (the local server),
one buffered body behind API Gateway REST (see memory_engine.edge.streaming).
"""

from typing import Any

from aws_lambda_powertools.event_handler import Response

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, json_response, lambda_entry, openai_error_body, tenant_of
from memory_engine.edge.streaming import sse_response
from memory_engine.models.chat import ChatCompletionRequest
from memory_engine.usecases import chat

app = build_resolver(shape_error=openai_error_body)


# Documented by hand: the body is OpenAI's completion object, or its event stream.
COMPLETION_RESPONSES: dict[int, Any] = {
    200: {
        "description": "The upstream's chat completion; server-sent chunks with `stream: true`",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    }
}


@app.post("/v1/chat/completions", responses=COMPLETION_RESPONSES)
def chat_completions(body: ChatCompletionRequest) -> Response[str]:
    engine, tenant = wiring.engine(), tenant_of(app)
    if body.stream:
        return sse_response(chat.stream(engine, tenant, body))
    return json_response(200, chat.complete(engine, tenant, body))


lambda_handler = lambda_entry(app)
