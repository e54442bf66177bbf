"""What `memory-engine serve` prints when it starts: where it listens, the inspector, the data dir,
and the API key only when the server has just made it (once, never an operator's own)."""

from __future__ import annotations

from memory_engine.settings import Settings
from memory_engine_app.data_dir import where
from memory_engine_app.server.inspector_assets import INSPECTOR_PATH


def banner(url: str, settings: Settings, key: str, created: bool) -> list[str]:
    """The start-up lines. A key set in MEMORY_ENGINE_API_KEY is the operator's: it is never
    printed (logs keep what a terminal shows); a generated one is printed when it is made, then
    only its file is named."""
    return [
        f"memory-engine listening on {url}",
        f"memory inspector: {url}{INSPECTOR_PATH}",
        where(settings),
        key_line(settings, key, created),
    ]


def key_line(settings: Settings, key: str, created: bool) -> str:
    """Which key the server takes: the new one in full, once; otherwise where it is."""
    stored = settings.data_dir.expanduser().resolve() / "api_key"
    if settings.api_key:
        return "API key: MEMORY_ENGINE_API_KEY (set in the environment; not printed)"
    if created:
        return f"API key (new, shown this once; kept in {stored}): {key}"
    return f"API key: the one in {stored} (printed when it was made)"
