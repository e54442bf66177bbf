"""An OpenAI-compatible endpoint for the replay that answers anything: a request with a JSON
schema gets the smallest instance of it with one item in each list (so extraction writes a
memory and fact generation adds a fact), any other a short completion. Its facts quote the
request, as a model's do: each key fact of a memory is a speaker's line of the dialogue it was
sent, and a new fact the last message (so grounding keeps the key facts, a correction has one to
correct, and a user who said two things holds two facts). It records the Authorization header it
was sent (the key read from Secrets Manager by the function)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def minimal(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The smallest value a (strict) JSON schema accepts, but one item in a list that may hold one."""
    if "$ref" in schema:
        return minimal(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [option for option in schema[key] if option.get("type") != "null"] or schema[key]
            return minimal(options[0], defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {name: minimal(part, defs) for name, part in schema.get("properties", {}).items()}
    if kind == "array":
        count = max(schema.get("minItems", 0), min(1, schema.get("maxItems", 1)))
        return [minimal(schema.get("items", {}), defs) for _ in range(count)]
    if kind == "string":
        return "replay"[: schema.get("maxLength", 6)].ljust(schema.get("minLength", 0), "x")
    if kind in {"integer", "number"}:
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


# A JSON string inside a prompt's frame (`extraction.prompts.frame.quoted` writes each text so).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# A dialogue line, `[1] (time) "Mina": "I live in Busan." | "assistant": "…"`, and a message
# line of fact extraction, `- "I live in Busan."`.
_TURN = re.compile(r"^\[\d+\]")
_MESSAGE = re.compile(r'^- "')


def _strings(line: str) -> list[str]:
    return [json.loads(found) for found in _STRING.findall(line)]


def said(request: dict[str, Any]) -> tuple[list[str], list[str]]:
    """What the request's last user message quotes: each dialogue turn as its user's line
    ("Mina: I live in Busan."), and the messages listed for fact extraction."""
    users = [m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user"]
    lines = (users[-1] if users else "").splitlines()
    turns = [
        f"{words[0]}: {words[1]}" for line in lines if _TURN.match(line) if len(words := _strings(line)) >= 2
    ]
    messages = [_strings(line)[0] for line in lines if _MESSAGE.match(line)]
    return turns, messages


def quoting(instance: Any, request: dict[str, Any]) -> Any:
    """The schema's smallest instance with its facts quoting the request (see the module doc):
    one new key fact per turn, replacing none, and a new fact added from the last message."""
    if not isinstance(instance, dict):
        return instance
    turns, messages = said(request)
    if turns and "key_facts" in instance:
        instance["key_facts"] = [
            {"turn": number, "fact": line, "status": "new", "replaces": None}
            for number, line in enumerate(turns, start=1)
        ]
    if messages and "operations" in instance:
        instance["operations"] = [{"op": "add", "id": None, "fact": messages[-1]}]
    return instance


def answer(request: dict[str, Any]) -> dict[str, Any]:
    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema")
    content = json.dumps(quoting(minimal(schema, schema.get("$defs", {})), request)) if schema else "Noted."
    return {
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "replay"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@contextmanager
def llm_server() -> Iterator[tuple[str, list[str | None]]]:
    """(base URL, the Authorization headers received)."""
    keys: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            keys.append(self.headers.get("Authorization"))
            body = json.dumps(answer(request)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", keys
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
