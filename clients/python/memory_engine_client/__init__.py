"""The Python client of memory-engine's HTTP API (docs/clients.md): `MemoryEngine` (blocking) and
`AsyncMemoryEngine` (asyncio) over httpx, typed with the API's own pydantic models.

    from memory_engine_client import MemoryEngine

    with MemoryEngine() as engine:  # MEMORY_ENGINE_URL, MEMORY_ENGINE_API_KEY
        engine.consolidate("s1", "thread-1", {"uuid": "d1", "query": "My cat is Mochi.", "answer": ""})
        hits = engine.retrieve("thread-1", "What is my cat called?").data
"""

from memory_engine_client.async_client import AsyncMemoryEngine
from memory_engine_client.call import Call, Plan, Together
from memory_engine_client.errors import (
    ApiError,
    Conflict,
    FieldError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    TransportError,
    Unauthorized,
    Unavailable,
)
from memory_engine_client.sync_client import MemoryEngine
from memory_engine_client.transport import RetryPolicy

__all__ = [
    "ApiError",
    "AsyncMemoryEngine",
    "Call",
    "Conflict",
    "FieldError",
    "InvalidRequest",
    "MemoryEngine",
    "NotFound",
    "PayloadTooLarge",
    "Plan",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "Together",
    "TransportError",
    "Unauthorized",
    "Unavailable",
]
