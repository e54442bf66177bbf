"""`memory-engine` command line: serve locally, rebuild the search index."""

from __future__ import annotations

import argparse
import sys

from memory_engine.cli_admin import ADMIN_COMMANDS, add_admin_commands, run_admin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-engine")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_cmd = commands.add_parser("serve", help="run the local server (port from PORT, default 8080)")
    serve_cmd.add_argument("--host", default="127.0.0.1")
    serve_cmd.add_argument("--port", type=int, default=None)
    reindex_cmd = commands.add_parser("reindex", help="rebuild the search index from the store")
    reindex_cmd.add_argument("--tenant", default=None, help="only this tenant (default: all)")
    add_admin_commands(commands)
    args = parser.parse_args(argv)

    if args.command in ADMIN_COMMANDS:
        return run_admin(args)
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
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
