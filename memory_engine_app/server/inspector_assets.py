"""The memory inspector's page (HTML, JS, CSS in `inspector/`), served by the local server.

Plain files, no build step. Only the files in that folder are served, by exact name: a path is
never joined onto the file system. The page talks to its own origin (the Content-Security-Policy
says so); see docs/inspector.md for opening it against the API on AWS.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

INSPECTOR_PATH = "/inspector/"
_FOLDER = Path(__file__).resolve().parent / "inspector"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
}
_HEADERS = [
    ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
]


@lru_cache(maxsize=1)
def _assets() -> dict[str, tuple[str, bytes]]:
    return {
        path.name: (_TYPES[path.suffix], path.read_bytes())
        for path in sorted(_FOLDER.iterdir())
        if path.is_file() and path.suffix in _TYPES
    }


def inspector_asset(path: str) -> tuple[int, list[tuple[str, str]], bytes] | None:
    """The answer for a GET under INSPECTOR_PATH, or None when `path` is not under it."""
    if path == INSPECTOR_PATH.rstrip("/"):
        return 308, [("Location", INSPECTOR_PATH)], b""
    if not path.startswith(INSPECTOR_PATH):
        return None
    name = path.removeprefix(INSPECTOR_PATH) or "index.html"
    found = _assets().get(name)
    if found is None:
        body = f"No inspector file {name!r}: open {INSPECTOR_PATH}.".encode()
        return 404, [("Content-Type", "text/plain; charset=utf-8")], body
    content_type, body = found
    return 200, [("Content-Type", content_type), *_HEADERS], body
