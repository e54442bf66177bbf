"""Strict tool arguments: the MCP SDK's argument models coerce ("5" and true become 5) and drop
unknown names silently, so a model that sends `recall(thread=...)` would never learn the tool has
no such argument. Each tool's model is made strict (types as declared, unknown names refused, each
named in the error) and its input schema says so (`additionalProperties: false`)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict


def make_strict(server: MCPServer) -> None:
    # The SDK has no public hook for its argument models: its tool registry is read here, and
    # tests/e2e/doors/test_mcp_server.py fails if a newer SDK stops honouring this.
    for tool in server._tool_manager.list_tools():
        loose = tool.fn_metadata.arg_model
        config = ConfigDict(**{**loose.model_config, "extra": "forbid", "strict": True})
        strict: type[BaseModel] = type(
            loose.__name__, (loose,), {"model_config": config, "__module__": loose.__module__}
        )
        tool.fn_metadata.arg_model = strict  # type: ignore[assignment]
        tool.parameters = strict.model_json_schema(by_alias=True)
