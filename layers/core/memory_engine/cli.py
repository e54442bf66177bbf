"""`memory-engine` command line: serve locally, rebuild the search index."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-engine")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_cmd = commands.add_parser("serve", help="run the local server (port from PORT, default 8080)")
    serve_cmd.add_argument("--host", default="127.0.0.1")
    serve_cmd.add_argument("--port", type=int, default=None)
    reindex_cmd = commands.add_parser("reindex", help="rebuild the search index from the store")
    reindex_cmd.add_argument("--tenant", default=None, help="only this tenant (default: all)")
    key_cmd = commands.add_parser("create-key", help="create an API key for a tenant (AWS backend)")
    key_cmd.add_argument("--tenant", required=True, help="the tenant the key belongs to")
    args = parser.parse_args(argv)

    if args.command == "serve":
        from memory_engine.server.app import serve

        serve(args.host, args.port)
        return 0
    if args.command == "reindex":
        from tqdm import tqdm

        from memory_engine import wiring
        from memory_engine.usecases.indexing import rebuild

        engine = wiring.engine()
        with tqdm(unit=" memories", desc="reindex") as bar:
            count = rebuild(engine.store, engine.index, args.tenant, progress=lambda n: bar.update(n - bar.n))
        print(f"indexed {count} memories", file=sys.stderr)
        return 0
    if args.command == "create-key":
        from memory_engine import wiring
        from memory_engine.auth import KeyIssuer
        from memory_engine.errors import Unavailable
        from memory_engine.settings import get_settings

        keys = wiring.key_resolver() if get_settings().backend == "aws" else None
        if not isinstance(keys, KeyIssuer) or not args.tenant.strip():
            raise Unavailable(
                "Keys are created in the AWS table, for a non-empty --tenant: set "
                "MEMORY_ENGINE_BACKEND=aws and MEMORY_ENGINE_TABLE_NAME (the stack's TableName "
                "output). The local server has one key."
            )
        print(keys.create_key(args.tenant.strip()))  # shown once: only its hash is stored
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
