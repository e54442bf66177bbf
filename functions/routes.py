"""The route table as data: read by the local server and by the CDK app alike.

A route added here is served locally and gets its own Lambda and API Gateway method.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    function: str  # folder under functions/ holding handler.py
    auth: bool = True
    # False for a path API Gateway REST cannot hold (a ':' in a path part): served by the local
    # server only; on AWS the same function answers its other spelling (`/v1/memories/retrieve`).
    rest_api: bool = True


ROUTES: tuple[Route, ...] = (
    Route("GET", "/v1/engine/health/", "health", auth=False),
    Route("POST", "/v1/engine/consolidate/", "consolidate"),
    Route("POST", "/v1/engine/retrieve/", "retrieve"),
    Route("DELETE", "/v1/engine/delete/", "delete"),
    Route("POST", "/v1/engine/fork-delete/", "fork_delete"),
    Route("POST", "/v1/engine/embed/", "embed"),
    # Game-NPC memory (docs/api.md §2): the game envelope {"code", "msg", "data"}.
    Route("POST", "/open/game/memory", "game_memory"),
    Route("POST", "/open/game/recordmemory", "game_record_memory"),
    # Scoped memory bank (docs/api.md §3).
    Route("POST", "/v1/memories", "memories_create"),
    Route("GET", "/v1/memories/{id}", "memories_get"),
    Route("DELETE", "/v1/memories/{id}", "memories_delete"),
    Route("POST", "/v1/memories/retrieve", "memories_retrieve"),
    Route("POST", "/v1/memories:retrieve", "memories_retrieve", rest_api=False),
    Route("POST", "/v1/memories/generate", "memories_generate"),
    Route("POST", "/v1/memories:generate", "memories_generate", rest_api=False),
    # OpenAI-compatible chat with long-term memory (docs/api.md §4).
    Route("POST", "/v1/chat/completions", "chat_completions"),
    Route("DELETE", "/v1/users/{userid}/memory", "user_memory_delete"),
    # The memory inspector (docs/inspector.md): read-only views of the key's data, a delete
    # preview and a forced extraction.
    Route("GET", "/v1/inspect/threads", "inspect_threads"),
    Route("GET", "/v1/inspect/session", "inspect_session"),
    Route("GET", "/v1/inspect/memories", "inspect_memories"),
    Route("GET", "/v1/inspect/queue", "inspect_queue"),
    Route("GET", "/v1/inspect/delete-preview", "inspect_delete_preview"),
    Route("POST", "/v1/inspect/extract", "inspect_extract"),
)

# What API Gateway REST serves: every route but the spellings it cannot hold.
REST_ROUTES: tuple[Route, ...] = tuple(route for route in ROUTES if route.rest_api)


def functions() -> list[str]:
    """Every function folder, once, in route order."""
    return list(dict.fromkeys(route.function for route in ROUTES))


# Functions that are not HTTP routes, for the CDK app.
# Fed by a queue, not a route: the CDK app gives each its FIFO queue, dead-letter queue and event
# source mapping (partial batch responses).
WORKERS: tuple[str, ...] = ("extraction_worker",)
# Container-image functions (functions/<name>/Dockerfile, built with the repository root as context),
# invoked by other functions: the embedding model behind MEMORY_ENGINE_EMBEDDER=lambda.
IMAGE_FUNCTIONS: tuple[str, ...] = ("embedder_image",)
