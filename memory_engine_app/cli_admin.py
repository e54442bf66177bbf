"""Admin commands of `memory-engine`: API keys (`keys create|list|revoke|rotate|sync`) against the
configured key store (SQLite locally, DynamoDB with the AWS backend) and, on AWS, the API Gateway
usage plan that rate-limits each key; dead extraction jobs (`jobs list|retry`) of the configured
queue (the local dead-letter table, or the SQS dead-letter queue); `openapi`; and
`backfill-sessions`, the one-off upgrade step that lists the sessions of a DynamoDB table written
before its session listing index existed."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memory_engine.errors import MemoryEngineError

if TYPE_CHECKING:
    from memory_engine.ports import DeadLetters, KeyStore, UsagePlanKeys

ADMIN_COMMANDS = ("keys", "openapi", "jobs", "backfill-sessions")


def add_admin_commands(commands: Any) -> None:
    """Add the admin subcommands to the CLI's subparsers."""
    openapi_cmd = commands.add_parser("openapi", help="write the OpenAPI document of every route")
    openapi_cmd.add_argument("--out", default=None, help="file to write (default: stdout)")
    keys_cmd = commands.add_parser("keys", help="create, list, revoke and rotate API keys")
    actions = keys_cmd.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="a new key for a tenant; the key is printed once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--label", default="", help="a note for `keys list` (who or what uses it)")
    listing = actions.add_parser("list", help="key ids, tenants and states (never the keys)")
    listing.add_argument("--tenant", default=None)
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    revoke = actions.add_parser("revoke", help="stop a key working now")
    revoke.add_argument("key_id")
    rotate = actions.add_parser("rotate", help="a new key for the same tenant; the old one is revoked")
    rotate.add_argument("key_id")
    rotate.add_argument("--grace-seconds", type=int, default=0, help="keep the old key working this long")
    sync = actions.add_parser(
        "sync", help="give every working key its API Gateway usage-plan key, remove those of retired keys"
    )
    sync.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")
    commands.add_parser(
        "backfill-sessions",
        help="after an upgrade: list in the inspector the sessions written before the listing index",
    )
    jobs_cmd = commands.add_parser("jobs", help="list dead jobs with their errors, and queue them again")
    job_actions = jobs_cmd.add_subparsers(dest="action", required=True)
    dead = job_actions.add_parser("list", help="dead jobs, oldest first, with the error each died of")
    dead.add_argument("--json", action="store_true", help="one JSON object per line")
    retry = job_actions.add_parser("retry", help="queue dead jobs again (by id, or --all)")
    retry.add_argument("ids", nargs="*", help="ids from `jobs list`")
    retry.add_argument("--all", action="store_true", help="every dead job")


def run_admin(args: argparse.Namespace) -> int:
    """Run an admin command; a refusal (unknown key, bad tenant name) is exit code 1 with a message."""
    try:
        if args.command == "openapi":
            return write_openapi(args.out)
        if args.command == "backfill-sessions":
            return backfill_sessions()
        return _jobs(args) if args.command == "jobs" else _keys(args)
    except MemoryEngineError as error:
        print(f"memory-engine {args.command}: {error.message}", file=sys.stderr)
        return 1


def backfill_sessions() -> int:
    """Give the sessions of the configured DynamoDB table their listing keys (idempotent)."""
    from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
    from memory_engine.composition import wiring
    from memory_engine.settings import get_settings

    store = wiring.build_store(get_settings())
    if not isinstance(store, DynamoDbStore):
        print("memory-engine backfill-sessions: this store lists its sessions itself; nothing to do.")
        return 0
    listed = store.backfill_session_listing()
    print(f"listed {listed} sessions written before the listing index", file=sys.stderr)
    facts = store.backfill_fact_listing()
    print(f"listed {facts} memory-bank facts written before their listing", file=sys.stderr)
    scopes = store.backfill_fact_counts()
    print(f"counted the facts of {scopes} memory-bank scopes", file=sys.stderr)
    return 0


def write_openapi(out: str | None) -> int:
    """The OpenAPI document of every route, to a file or stdout."""
    import json
    from pathlib import Path

    from memory_engine_app.server.openapi import build_spec

    text = json.dumps(build_spec(), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        Path(out).write_text(text)
    return 0


def _keys(args: argparse.Namespace) -> int:
    from memory_engine.composition import key_wiring
    from memory_engine.ports.clock import SystemClock
    from memory_engine.settings import get_settings
    from memory_engine.usecases import keys
    from memory_engine_app.data_dir import unserved_warning

    store, usage, now = key_wiring.key_store(), key_wiring.usage_plan_keys(), SystemClock().now()
    if args.action == "sync":
        return _sync(store, usage, now, args.dry_run)
    if args.action == "create":
        warning = unserved_warning(get_settings())  # before the key store makes the database file
        issued = keys.create(store, now, args.tenant, args.label, usage=usage)
        print(issued.key)
        print(
            f"key {issued.record.key_id} for tenant {issued.record.tenant}: keep it, it is not shown again",
            file=sys.stderr,
        )
        if warning:
            print(warning, file=sys.stderr)
    elif args.action == "rotate":
        issued = keys.rotate(store, now, args.key_id, timedelta(seconds=args.grace_seconds), usage=usage)
        print(issued.key)
        print(
            f"key {issued.record.key_id} replaces {args.key_id} (tenant {issued.record.tenant})",
            file=sys.stderr,
        )
    elif args.action == "revoke":
        revoked = keys.revoke(store, now, args.key_id, usage=usage)
        print(f"key {revoked.key_id} of tenant {revoked.tenant} revoked", file=sys.stderr)
    else:
        for key in keys.list_keys(store, args.tenant):
            state = "active" if key.revoked_at is None else ("revoked" if not key.active(now) else "expiring")
            if args.json:
                print(key.model_dump_json(exclude={"key_hash"}))
            else:
                until = f" until {key.revoked_at:%Y-%m-%dT%H:%M:%SZ}" if state == "expiring" else ""
                print(f"{key.key_id}  {key.tenant}  {state}{until}  {key.created_at:%Y-%m-%d}  {key.label}")
    return 0


def _sync(store: KeyStore, usage: UsagePlanKeys, now: datetime, dry_run: bool) -> int:
    from memory_engine.usecases import keys

    outcome = keys.sync(store, usage, now, dry_run=dry_run)
    verb = ("added", "removed") if outcome.applied else ("would add", "would remove")
    for key_id in outcome.added:
        print(f"{verb[0]} {key_id}")
    for key_id in outcome.removed:
        print(f"{verb[1]} {key_id}")
    print(f"usage plan: {len(outcome.added)} {verb[0]}, {len(outcome.removed)} {verb[1]}", file=sys.stderr)
    return 0


def dead_letters() -> DeadLetters:
    """The configured queue's dead letters, without building the engine (no model, no index)."""
    from memory_engine.composition import wiring
    from memory_engine.errors import Unavailable
    from memory_engine.ports import DeadLetters
    from memory_engine.settings import get_settings

    queue = wiring.build_queue(get_settings())
    if not isinstance(queue, DeadLetters):
        raise Unavailable(f"The configured queue ({type(queue).__name__}) keeps no dead letters.")
    return queue


_STATES = {True: "resolved", False: "open", None: "-"}


def _jobs(args: argparse.Namespace) -> int:
    letters = dead_letters()
    if args.action == "list":
        from memory_engine.composition import wiring
        from memory_engine.limits import Limits
        from memory_engine.settings import get_settings
        from memory_engine.usecases.dead_jobs import with_resolution

        settings = get_settings()
        found = with_resolution(wiring.build_store(settings), Limits.of(settings), letters.dead_letters())
        for dead in found:
            if args.json:
                print(dead.model_dump_json())
            else:
                when = f"{dead.dead_at:%Y-%m-%dT%H:%M:%SZ}" if dead.dead_at else "-"
                error = dead.error or "(parked by the queue: no error recorded)"
                where = f"{dead.job.kind}  {dead.job.group_id()}"
                print(f"{dead.id}  {where}  {dead.receive_count}x  {when}  {_STATES[dead.resolved]}  {error}")
        done = sum(dead.resolved is True for dead in found)
        print(f"{len(found)} dead job(s), {done} resolved (extracted since)", file=sys.stderr)
        return 0
    if not args.ids and not args.all:
        print(
            "memory-engine jobs retry: name the ids to retry (from `jobs list`), or pass --all",
            file=sys.stderr,
        )
        return 2
    moved = letters.redrive(None if args.all else args.ids)
    for dead in moved:
        print(f"queued {dead.id}  {dead.job.kind}  {dead.job.group_id()}")
    missing = sorted(set(args.ids) - {dead.id for dead in moved})
    for unknown in missing:
        print(f"no dead job {unknown}", file=sys.stderr)
    print(f"{len(moved)} job(s) queued again", file=sys.stderr)
    return 1 if missing else 0
