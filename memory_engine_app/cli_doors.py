"""The doors' commands of `memory-engine` (docs/clients.md): `mcp` serves the MCP server over stdio
or streamable HTTP (the client distribution's `memory-engine-mcp`, with the same options); `smoke`
walks a running API end to end (docs/smoke.md). Both talk to an API through the Python client
(`memory-engine-client`, clients/python), so they work the same against `make run` and a deployed
stack; without that distribution installed they say how to install it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

DOOR_COMMANDS = ("mcp", "smoke")


def add_door_commands(commands: Any) -> None:
    """Add the doors' subcommands to the CLI's subparsers."""
    mcp = commands.add_parser(
        "mcp", help="serve memory-engine's tools to MCP clients (API from MEMORY_ENGINE_URL / _API_KEY)"
    )
    try:
        from memory_engine_mcp.cli import add_arguments
    except ImportError:  # the client distribution is not installed: `run_door` says so
        mcp.add_argument("rest", nargs=argparse.REMAINDER)
    else:
        add_arguments(mcp)
    smoke = commands.add_parser("smoke", help="walk a running API end to end and clean up (docs/smoke.md)")
    _api_arguments(smoke)
    smoke.add_argument("--wait", type=_seconds, default=180.0, help="seconds to wait for extraction")
    smoke.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        help="seconds each request may take (default 30, under API Gateway's 29 s answer; more for a "
        "local server on a busy machine)",
    )
    smoke.add_argument(
        "--chat-model", default=None, help="check chat with this model (the stack's upstream must be set)"
    )


def _seconds(given: str) -> float:
    """A number of seconds above 0 (a timeout of 0 or less would fail every request at once)."""
    try:
        seconds = float(given)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{given!r} is not a number of seconds: give e.g. 90") from None
    if not seconds > 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{given} is not above 0: give a number of seconds, e.g. 90")
    return seconds


def _api_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--api", default=None, help="the API's base URL (default MEMORY_ENGINE_URL)")
    parser.add_argument("--key", default=None, help="an API key (default MEMORY_ENGINE_API_KEY)")


def run_door(args: argparse.Namespace) -> int:
    try:
        if args.command == "mcp":
            from memory_engine_mcp.cli import run

            return run(args)
        from memory_engine_app.smoke import smoke
    except ImportError as error:
        print(
            f"memory-engine {args.command} needs the Python client ({error.name} is missing): "
            "pip install ./clients/python, or 'memory-engine-client[mcp]' for mcp",
            file=sys.stderr,
        )
        return 2
    return smoke(args.api, args.key, wait=args.wait, chat_model=args.chat_model, timeout=args.timeout)
