"""memory-engine as an MCP server (`memory-engine mcp`, docs/clients.md#mcp-server): tools to
remember, recall, forget and list memories, over stdio or streamable HTTP, talking to a
memory-engine API through the Python client (MEMORY_ENGINE_URL, MEMORY_ENGINE_API_KEY)."""

from memory_engine_mcp.server import build_server

__all__ = ["build_server"]
