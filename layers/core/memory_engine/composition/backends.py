"""The backends by name (MEMORY_ENGINE_BACKEND): what sets one apart beyond its adapters.

Its adapters (store, queue, key store, usage plan) come from the factory maps of
`memory_engine.composition.providers`, keyed by the same name; adding a backend is one entry in each map and
one here (see docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_engine.settings import StorageSettings


@dataclass(frozen=True)
class Backend:
    """What a backend implies besides its adapters."""

    # The one local API key (MEMORY_ENGINE_API_KEY or the generated one) is accepted too.
    single_local_key: bool
    # Without OpenSearch, the in-process index is persisted beside this backend's database; where
    # it is not, only OpenSearch outlives the process, so that is what `reindex` rebuilds.
    index_files: bool


BACKENDS: dict[str, Backend] = {
    "local": Backend(single_local_key=True, index_files=True),
    "aws": Backend(single_local_key=False, index_files=False),
}


def backend(settings: StorageSettings) -> Backend:
    """The configured backend's entry in `BACKENDS` (the settings allow only its names)."""
    return BACKENDS[settings.backend]


def database_path(settings: StorageSettings) -> str:
    """The local backend's single SQLite file, in the data folder (created when missing)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return str(settings.data_dir / "memory-engine.sqlite3")
