"""The doors' commands of `memory-engine` (docs/clients.md): `mcp` serves the MCP server over stdio
or streamable HTTP; `smoke` walks a running API end to end (docs/smoke.md). Both talk to an API
through the Python client, so they work the same against `make run` and a deployed stack."""

from __future__ import annotations

import argparse
from typing import Any

DOOR_COMMANDS = ("mcp", "smoke")


def add_door_commands(commands: Any) -> None:
    """Add the doors' subcommands to the CLI's subparsers."""
    mcp = commands.add_parser(
        "mcp", help="serve memory-engine's tools to MCP clients (API from MEMORY_ENGINE_URL / _API_KEY)"
    )
    mcp.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --transport http")
    mcp.add_argument("--port", type=int, default=8000, help="with --transport http (path /mcp)")
    _api_arguments(mcp)
    smoke = commands.add_parser("smoke", help="walk a running API end to end and clean up (docs/smoke.md)")
    _api_arguments(smoke)
    smoke.add_argument("--wait", type=float, default=180.0, help="seconds to wait for extraction")
    smoke.add_argument(
        "--chat-model", default=None, help="check chat with this model (the stack's upstream must be set)"
    )


def _api_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--api", default=None, help="the API's base URL (default MEMORY_ENGINE_URL)")
    parser.add_argument("--key", default=None, help="an API key (default MEMORY_ENGINE_API_KEY)")


def run_door(args: argparse.Namespace) -> int:
    if args.command == "mcp":
        return _mcp(args)
    from memory_engine_app.smoke import smoke

    return smoke(args.api, args.key, wait=args.wait, chat_model=args.chat_model)


def _mcp(args: argparse.Namespace) -> int:
    import logging

    from memory_engine_client import AsyncMemoryEngine
    from memory_engine_mcp import build_server

    # httpx logs every request at INFO: one line per tool call on the MCP client's stderr.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    server = build_server(lambda: AsyncMemoryEngine(args.api, args.key))
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)
    return 0
