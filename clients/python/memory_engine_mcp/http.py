"""The streamable HTTP transport, open to no stranger: a token on every request, and the MCP SDK's
Host/Origin checks (against DNS rebinding) on for whatever address it binds.

The SDK turns those checks on only for the three loopback names and serves anyone who reaches the
port: here the allowed hosts are the loopback names, the bound host (unless it is a wildcard such
as 0.0.0.0) and those named with --allowed-host; the token is the server's own
(MEMORY_ENGINE_MCP_TOKEN or --token-file) or else the engine key it talks with.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import sys
from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("0.0.0.0", "::", "")


class BearerToken:
    """ASGI middleware: 401 unless `Authorization: Bearer <token>` (compared in constant time)."""

    def __init__(self, app: Any, token: str) -> None:
        if not token:
            raise ValueError("the HTTP transport needs a token: set MEMORY_ENGINE_MCP_TOKEN or the API key")
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if hmac.compare_digest(given, self.expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {"error": "unauthorized", "message": "send Authorization: Bearer <the MCP server's token>"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="memory-engine-mcp"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def security_for(host: str, allowed_hosts: Sequence[str]) -> TransportSecuritySettings:
    """Host/Origin checks on, whatever the bound host: the loopback names, the bound host (not a
    wildcard) and the extra names; a name without a port allows any port."""
    names = [*LOOPBACK_NAMES, *([] if host in WILDCARDS else [_bracketed(host)]), *allowed_hosts]
    hosts = sorted({name if _has_port(name) else f"{name}:*" for name in names})
    origins = sorted({f"{scheme}://{name}" for name in hosts for scheme in ("http", "https")})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def serve_http(server: MCPServer, host: str, port: int, token: str, allowed_hosts: Sequence[str]) -> None:
    import uvicorn

    if not is_loopback(host):
        print(
            f"memory-engine mcp: listening on {host}, not on loopback: anyone who can reach the port "
            "and holds the token acts with this server's API key. Host headers allowed: "
            f"{', '.join(security_for(host, allowed_hosts).allowed_hosts)}.",
            file=sys.stderr,
            flush=True,
        )
    app = server.streamable_http_app(transport_security=security_for(host, allowed_hosts), host=host)
    uvicorn.run(BearerToken(app, token), host=host, port=port, log_level="warning")


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _has_port(name: str) -> bool:
    return name.rsplit("]", 1)[-1].count(":") == 1 if name.startswith("[") else name.count(":") == 1
