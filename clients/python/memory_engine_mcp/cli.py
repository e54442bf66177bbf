"""`memory-engine-mcp` (also `memory-engine mcp`): the MCP server over stdio, or streamable HTTP,
for one user bound at start (docs/clients.md#mcp-server)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from memory_engine_mcp.identity import identity_from

TOKEN_VARIABLE = "MEMORY_ENGINE_MCP_TOKEN"
KEY_VARIABLE = "MEMORY_ENGINE_API_KEY"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The MCP server's options (shared by both commands)."""
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="with --transport http (a warning off loopback)")
    parser.add_argument("--port", type=int, default=8000, help="with --transport http (path /mcp)")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="with --transport http: a Host header to accept besides loopback and --host (repeatable)",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        default=None,
        help=f"with --transport http: the token clients send (default {TOKEN_VARIABLE}, else the API key)",
    )
    parser.add_argument("--api", default=None, help="the API's base URL (default MEMORY_ENGINE_URL)")
    parser.add_argument(
        "--key-file", type=Path, default=None, help=f"a file holding the API key (default {KEY_VARIABLE})"
    )
    parser.add_argument("--key", default=None, help=argparse.SUPPRESS)  # shows in `ps`: warned
    who = parser.add_argument_group("whose memory (each also MEMORY_ENGINE_MCP_<NAME>)")
    who.add_argument("--thread", default=None, help="the memory thread (default 'mcp')")
    who.add_argument("--session", default=None, help="the session of remembered turns (default the thread)")
    who.add_argument("--scope", default=None, help="store facts under this scope instead: user_id=42 or JSON")
    who.add_argument("--user-name", default=None, help="the user's name in turns (default by language)")
    who.add_argument("--language", default=None, help="ko, en, ... (default: Korean text ko, else en)")


def run(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        print(
            "memory-engine mcp needs the MCP SDK: pip install 'memory-engine-client[mcp]'",
            file=sys.stderr,
        )
        return 2
    from memory_engine_client import AsyncMemoryEngine
    from memory_engine_mcp.http import serve_http
    from memory_engine_mcp.server import build_server

    try:
        identity = identity_from(args.thread, args.session, args.scope, args.user_name, args.language)
        key = _api_key(args)
    except (ValueError, OSError) as error:
        print(f"memory-engine mcp: {error}", file=sys.stderr)
        return 2
    # httpx logs every request at INFO: one line per tool call on the MCP client's stderr.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    server = build_server(identity, lambda: AsyncMemoryEngine(args.api, key))
    if args.transport == "stdio":
        server.run("stdio")
        return 0
    token = _read(args.token_file) if args.token_file else os.environ.get(TOKEN_VARIABLE) or key
    if not token:
        print(
            f"memory-engine mcp: the HTTP transport needs a token: {TOKEN_VARIABLE} or an API key",
            file=sys.stderr,
        )
        return 2
    serve_http(server, args.host, args.port, token, args.allowed_host)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-engine-mcp", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


def _api_key(args: argparse.Namespace) -> str | None:
    if args.key:
        print(
            f"memory-engine mcp: a key given with --key shows in `ps`: set {KEY_VARIABLE} or use --key-file",
            file=sys.stderr,
        )
        return str(args.key)
    if args.key_file:
        return _read(args.key_file)
    return os.environ.get(KEY_VARIABLE) or None


def _read(path: Path) -> str:
    value = path.expanduser().read_text().strip()
    if not value:
        raise ValueError(f"{path} is empty")
    return value
