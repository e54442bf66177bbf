"""memory-engine as an MCP server (`memory-engine-mcp`, or `memory-engine mcp`; docs/clients.md#mcp-server):
tools to remember, recall, list, get and forget one user's memories, over stdio or streamable HTTP,
talking to a memory-engine API through the Python client (MEMORY_ENGINE_URL, MEMORY_ENGINE_API_KEY)."""
