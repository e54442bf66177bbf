"""The memory inspector's page (HTML, JS, CSS in `inspector/`), served by the local server.

Plain files, no build step. Only the files in that folder are served, by exact name: a path is
never joined onto the file system. The page talks to its own origin only (its script refuses any
other `?api=`, and the Content-Security-Policy, in the page and in the headers, says so); see
docs/inspector.md for serving it beside the API on AWS.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

INSPECTOR_PATH = "/inspector/"
INSPECTOR_FOLDER = Path(__file__).resolve().parent / "inspector"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
}
# What the page may load and call: itself only. index.html carries the same policy in a <meta>
# (for hosts that send no headers); the header adds what a <meta> cannot say (frame-ancestors).
PAGE_POLICY = (
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
_HEADERS = [
    ("Content-Security-Policy", f"{PAGE_POLICY}; frame-ancestors 'none'"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
]


@lru_cache(maxsize=1)
def _assets() -> dict[str, tuple[str, bytes]]:
    return {
        path.name: (_TYPES[path.suffix], path.read_bytes())
        for path in sorted(INSPECTOR_FOLDER.iterdir())
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
