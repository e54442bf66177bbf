"""The doors' end-to-end tests (MCP server, LangGraph store, smoke) share one local server, its
chat upstream a local OpenAI stub (so the smoke test's chat step runs): the dialects' fixtures."""

from __future__ import annotations

import os

from tests.e2e.conftest import API_KEY, ROOT, LocalServer
from tests.e2e.dialects.conftest import server, upstream

__all__ = ["door_env", "server", "upstream"]


def door_env(server: LocalServer, key: str = API_KEY) -> dict[str, str]:
    """What a door's process gets: the API's URL and key, and this checkout's code."""
    return {
        **os.environ,
        "MEMORY_ENGINE_URL": server.url,
        "MEMORY_ENGINE_API_KEY": key,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "layers" / "core"), str(ROOT), str(ROOT / "clients" / "python")]
        ),
    }
