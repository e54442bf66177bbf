"""The backends by name (MEMORY_ENGINE_BACKEND): what sets one apart beyond its adapters.

Its adapters (store, queue, key store, usage plan) come from the factory maps of
`memory_engine.composition.providers`, keyed by the same name; adding a backend is one entry in each map and
one here (see docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from memory_engine.settings import StorageSettings


@dataclass(frozen=True)
class Backend:
    """What a backend implies besides its adapters."""

    # The one local API key (MEMORY_ENGINE_API_KEY or the generated one) is accepted too.
    single_local_key: bool
    # Its search index where MEMORY_ENGINE_INDEX and the OpenSearch URL are unset: the local
    # backend persists the in-process index beside its database ("files"); elsewhere only
    # OpenSearch outlives the process, and without it an index is rebuilt in memory at start.
    index: Literal["files", "memory"]


BACKENDS: dict[str, Backend] = {
    "local": Backend(single_local_key=True, index="files"),
    "aws": Backend(single_local_key=False, index="memory"),
}


def backend(settings: StorageSettings) -> Backend:
    """The configured backend's entry in `BACKENDS` (the settings allow only its names)."""
    return BACKENDS[settings.backend]


def database_path(settings: StorageSettings) -> str:
    """The local backend's single SQLite file, in the data folder (created when missing)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return str(settings.data_dir / "memory-engine.sqlite3")
