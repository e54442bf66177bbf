"""Structured-output modes: how the answer's JSON schema reaches the server, and how to tell that a
server does not support a mode (so the client moves to the next one instead of retrying).

- `json_schema`: OpenAI's strict structured outputs (`response_format.type = "json_schema"`);
  also vLLM, Ollama, LM Studio, llama.cpp's llama-server.
- `json_object_schema`: JSON mode carrying the schema (`{"type": "json_object", "schema": …}`),
  which llama-cpp-python's server turns into a grammar; it answers `json_schema` with HTTP 500.
- `json_object`: plain JSON mode; the schema is told in the system prompt, nothing enforces it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from memory_engine.extraction.prompts.render import StructuredOutput
from memory_engine.extraction.schema import strict_json_schema

# The next mode to try when a server refuses one: each asks less of the server.
FALLBACK: dict[StructuredOutput, StructuredOutput | None] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
    "json_object": None,
}

# Words of the error bodies servers answer an unsupported response format with (OpenAI and vLLM
# name `response_format`/`json_schema`, llama-cpp-python its `type` literals, others the grammar
# or guided decoding they could not build).
_MODE_WORDS = (
    "response_format",
    "response format",
    "json_schema",
    "json_object",
    "schema",
    "grammar",
    "guided",
    "structured output",
)
# Statuses that say something else (authentication, unknown model or route, limits, load).
_NOT_ABOUT_THE_MODE = {401, 402, 403, 404, 408, 409, 413, 429}


def response_format(mode: StructuredOutput, output: type[BaseModel], name: str) -> dict[str, Any]:
    """The `response_format` of a request in `mode` for answers validated by `output`."""
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": strict_json_schema(output)}
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": True, "schema": strict_json_schema(output)},
    }


def refuses_mode(status: int, message: str, body: object) -> bool:
    """Whether an error answer says the request's structured-output mode is what failed: a 4xx or
    5xx (other than authentication, not found, limits) whose text names the response format."""
    if status < 400 or status in _NOT_ABOUT_THE_MODE:
        return False
    text = f"{message} {json.dumps(body, ensure_ascii=False, default=str)}".lower()
    return any(word in text for word in _MODE_WORDS)
