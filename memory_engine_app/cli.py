"""`memory-engine` command line: serve locally, create and rebuild the search index."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pydantic import ValidationError

from memory_engine.errors import MemoryEngineError
from memory_engine.ports import Embedder, SearchIndex, Store
from memory_engine_app.cli_admin import ADMIN_COMMANDS, add_admin_commands, run_admin
from memory_engine_app.cli_doors import DOOR_COMMANDS, add_door_commands, run_door
from memory_engine_app.cli_transfer import TRANSFER_COMMANDS, add_transfer_commands, run_transfer

if TYPE_CHECKING:
    from memory_engine.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-engine")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_cmd = commands.add_parser("serve", help="run the local server (port from PORT, default 8080)")
    serve_cmd.add_argument("--host", default="127.0.0.1")
    serve_cmd.add_argument("--port", type=int, default=None)
    reindex_cmd = commands.add_parser("reindex", help="rebuild the search index from the store")
    reindex_cmd.add_argument("--tenant", default=None, help="only this tenant (default: all)")
    reindex_cmd.add_argument(
        "--reembed",
        action="store_true",
        help="first give every stored memory new vectors from the configured model (after changing it)",
    )
    create_cmd = commands.add_parser(
        "create-index", help="create the OpenSearch index with its mapping (a deploy/bootstrap step)"
    )
    create_cmd.add_argument(
        "--recreate", action="store_true", help="drop the index first if it exists (then run reindex)"
    )
    add_admin_commands(commands)
    add_door_commands(commands)
    add_transfer_commands(commands)
    args = parser.parse_args(argv)

    if args.command in DOOR_COMMANDS:  # they talk to an API over HTTP: no data dir of their own
        return run_door(args)
    try:
        if args.command not in ("serve", "openapi"):  # the server's banner says it; openapi reads no data
            from memory_engine.settings import get_settings
            from memory_engine_app.data_dir import where

            print(f"memory-engine {args.command}: {where(get_settings())}", file=sys.stderr)
        if args.command in ADMIN_COMMANDS:
            return run_admin(args)
        if args.command in TRANSFER_COMMANDS:
            return run_transfer(args)
        if args.command == "serve":
            from memory_engine_app.server.app import serve

            serve(args.host, args.port)
            return 0
        if args.command == "reindex":
            return reindex(args.tenant, args.reembed)
        if args.command == "create-index":
            return create_index(args.recreate)
    except ValidationError as error:  # the configuration: the message names the variables
        print(error, file=sys.stderr)
        return 2
    except MemoryEngineError as error:
        print(f"memory-engine {args.command}: {error.message}", file=sys.stderr)
        return 1
    return 2


def reindex(tenant: str | None, reembed: bool = False) -> int:
    """Rebuild the search index from the store (the system of record), with a progress bar;
    with `reembed`, the stored vectors are first recomputed with the configured embedder."""
    from tqdm import tqdm

    from memory_engine.composition import wiring
    from memory_engine.indexing.documents import rebuild
    from memory_engine.settings import get_settings

    settings = get_settings()
    index: SearchIndex
    embedder: Embedder | None = None
    injected = wiring.installed()
    if injected is not None:
        store, index, embedder = injected.store, injected.index, injected.embedder
    else:
        choice = wiring.index_choice(settings)
        if choice == "memory":
            print(
                "memory-engine reindex: the configured index (MEMORY_ENGINE_INDEX=memory) is rebuilt "
                "from the store at every start, so there is nothing to rebuild; set "
                "MEMORY_ENGINE_OPENSEARCH_URL to rebuild the OpenSearch index.",
                file=sys.stderr,
            )
            return 2
        store = wiring.build_store(settings)
        if choice == "files":  # the local backend's index files, rebuilt in place
            if reembed:
                _reembed(store, wiring.build_embedder(settings), tenant)
            return _reindex_local(settings, store, tenant)
        index = wiring.build_index(settings, store)
        if reembed:
            embedder = wiring.build_embedder(settings)
    if reembed and embedder is not None:
        _reembed(store, embedder, tenant)
    with tqdm(unit=" memories", desc="reindex") as bar:
        count = rebuild(store, index, tenant, progress=lambda n: bar.update(n - bar.n))
    print(f"indexed {count} memories", file=sys.stderr)
    return 0


def _reembed(store: Store, embedder: Embedder, tenant: str | None) -> None:
    from tqdm import tqdm

    from memory_engine.settings import get_settings
    from memory_engine.usecases.reembed import reembed as reembed_memories

    with tqdm(unit=" memories", desc="re-embed") as bar:
        done = reembed_memories(
            store,
            embedder,
            tenant,
            progress=lambda n: bar.update(n - bar.n),
            max_chars=get_settings().embed_max_chars,
        )
    print(f"re-embedded {done} memories", file=sys.stderr)


def _reindex_local(settings: Settings, store: Store, tenant: str | None) -> int:
    """Rebuild the persisted local index from scratch (every tenant), or one tenant's part of it;
    run it while no server uses the same data folder (the index files have one writer)."""
    from tqdm import tqdm

    from memory_engine.adapters.local.index_files import PersistedIndex
    from memory_engine.indexing.documents import rebuild
    from memory_engine_app.local_index import local_index_path, open_local_index

    threshold = settings.local_index_ann_threshold or None
    if tenant is None:
        index = PersistedIndex(local_index_path(settings), threshold)
    else:
        index = open_local_index(settings, store)
    with index.bulk(), tqdm(unit=" memories", desc="reindex") as bar:
        count = rebuild(store, index, tenant, progress=lambda n: bar.update(n - bar.n))
    print(f"indexed {count} memories into {index.directory}", file=sys.stderr)
    return 0


def create_index(recreate: bool) -> int:
    """Create the OpenSearch index; never done by a function at run time."""
    from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
    from memory_engine.composition import wiring
    from memory_engine.errors import Unavailable
    from memory_engine.settings import get_settings

    settings = get_settings()
    choice = wiring.index_choice(settings)
    if choice != "opensearch":
        print(
            f"memory-engine create-index: the configured index (MEMORY_ENGINE_INDEX={choice}) needs no "
            "creation; set MEMORY_ENGINE_OPENSEARCH_URL (the OpenSearch endpoint) to create that one.",
            file=sys.stderr,
        )
        return 2
    index = wiring.build_index(settings)  # INDEXES["opensearch"]: no store needed
    if not isinstance(index, OpenSearchIndex):
        raise Unavailable(
            f"the OpenSearch choice built a {type(index).__name__}, not the "
            "OpenSearch index; check that nothing replaced INDEXES['opensearch'] (a plug-in, a test)."
        )
    created = index.create_index(recreate=recreate)
    state = "created" if created else "already exists (kept; --recreate drops it)"
    print(f"OpenSearch index {index.index!r} at {index.url}: {state}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
