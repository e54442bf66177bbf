"""Where the local backend's data lives, said out loud: every CLI command and the server's banner
name the data dir they use, and the server leaves a mark in it.

`MEMORY_ENGINE_DATA_DIR` defaults to `./.memory-engine` of the current directory, so a command run
from another directory silently used another database: `keys create` printed a key the server then
refused with 401. Now each command says which folder it uses (absolute), and `keys create` on a
folder no server has used warns.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memory_engine.settings import Settings

SERVED_MARK = "served.json"  # written by `memory-engine serve` at each start


def where(settings: Settings) -> str:
    """One line: the data a command works on (the local data dir, or the AWS table)."""
    if settings.backend == "aws":
        return f"AWS backend: table {settings.table_name or '(MEMORY_ENGINE_TABLE_NAME unset)'}"
    folder = settings.data_dir.expanduser().resolve()
    if settings.data_dir == Settings.model_fields["data_dir"].default:
        return f"data dir {folder} (the default, ./.memory-engine here; MEMORY_ENGINE_DATA_DIR sets it)"
    return f"data dir {folder} (MEMORY_ENGINE_DATA_DIR)"


def mark_served(settings: Settings, url: str) -> None:
    """Record in the data dir that a server uses it (and where it listens)."""
    folder = settings.data_dir
    folder.mkdir(parents=True, exist_ok=True)
    stamp = {"url": url, "started_at": datetime.now(UTC).isoformat(timespec="seconds")}
    (folder / SERVED_MARK).write_text(json.dumps(stamp) + "\n")


def served(settings: Settings) -> bool:
    """Whether a server has ever started on this data dir."""
    return (settings.data_dir / SERVED_MARK).is_file()


def unserved_warning(settings: Settings) -> str | None:
    """What `keys create` says on a local data dir no server has used; None otherwise."""
    if settings.backend != "local" or served(settings):
        return None
    folder = settings.data_dir.expanduser().resolve()
    return (
        f"warning: no server has used {folder} yet: a server started with another "
        "MEMORY_ENGINE_DATA_DIR, or from another directory, will not know this key (401). Start the "
        "server with this data dir, or run this command where the server runs."
    )
