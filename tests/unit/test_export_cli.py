"""`memory-engine export` and `memory-engine import`: a file of JSON lines between two engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine_app import cli
from tests.fakes.engine import fake_engine
from tests.fakes.ports import SetClock
from tests.unit.test_export_import import TENANT, canonical, fill, records


def run_on(engine: Engine, *argv: str) -> int:
    wiring.use(engine)
    try:
        return cli.main(list(argv))
    finally:
        wiring.use(None)


def test_export_then_import_moves_a_tenant_between_engines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an engine with a tenant's data, exported to a file
    source, target = fake_engine(clock=SetClock()), fake_engine(clock=SetClock())
    fill(source)
    dump = tmp_path / "acme.jsonl"
    assert run_on(source, "export", "--tenant", TENANT, "--out", str(dump)) == 0
    lines = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "export" and lines[0]["tenant"] == TENANT and lines[0]["version"] == 1
    assert all({"kind", "version"} <= line.keys() for line in lines)

    # When it is imported into another engine, twice
    assert run_on(target, "import", str(dump), "--tenant", "acme-copy") == 0
    first = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert run_on(target, "import", str(dump), "--tenant", "acme-copy") == 0
    second = json.loads(capsys.readouterr().err.strip().splitlines()[-1])

    # Then the copy holds the same records, written once
    assert canonical(records(target, tenant="acme-copy")) == canonical(records(source))
    assert sum(first["written"].values()) == len(lines) - 1
    assert sum(second["written"].values()) == 0


def test_a_thread_export_and_a_mapped_import(tmp_path: Path) -> None:
    source, target = fake_engine(clock=SetClock()), fake_engine(clock=SetClock())
    fill(source)
    dump = tmp_path / "thread.jsonl"
    assert run_on(source, "export", "--tenant", TENANT, "--thread", "thread-2", "--out", str(dump)) == 0

    mapping = json.dumps({"parent_session_uuid": {"thread-2": "t-new"}})
    assert run_on(target, "import", str(dump), "--tenant", TENANT, "--map", mapping) == 0

    assert [s.parent_session_uuid for s in target.store.list_sessions(TENANT)] == ["t-new"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["export", "--tenant", TENANT, "--scope", "not json"], "scope"),
        (["export", "--tenant", TENANT, "--scope", "{}"], "scope"),
        (["import", "-", "--tenant", TENANT, "--map", '{"user_id": "x"}'], "--map"),
    ],
)
def test_bad_arguments_say_what_to_send(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_on(fake_engine(), *argv) == 1
    assert said in capsys.readouterr().err


def test_a_bad_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "bad.jsonl"
    dump.write_text('{"kind": "export", "version": 1}\n{"kind": "turn", "version": 7}\n', encoding="utf-8")

    assert run_on(fake_engine(), "import", str(dump), "--tenant", TENANT) == 1
    assert "line 2" in capsys.readouterr().err


def test_the_retention_command_sets_shows_and_clears_a_tenants_retention(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a tenant with a fact stored before any retention
    clock = SetClock()
    engine = fake_engine(clock=clock)
    fill(engine)
    fact = next(m for m in engine.store.iter_memories(TENANT) if m.is_fact and m.expires_at is None)

    # When a retention of 30 days is set, shown, then cleared
    assert run_on(engine, "retention", "--tenant", TENANT, "--days", "30") == 0
    assert run_on(engine, "retention", "--tenant", TENANT) == 0
    shown = capsys.readouterr().out
    assert run_on(engine, "retention", "--tenant", TENANT, "--none") == 0

    # Then the stored fact got its expiry, and the tenant keeps memories until deleted again
    assert "memories kept 30 days" in shown
    stamped = engine.store.get_memory(TENANT, fact.memory_id)
    assert stamped is not None and stamped.expires_at is not None
    assert engine.store.get_retention(TENANT) is None


def test_a_retention_out_of_bounds_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_on(fake_engine(), "retention", "--tenant", TENANT, "--days", "0") == 1
    assert "1 to 36500 days" in capsys.readouterr().err


def test_export_without_a_tenant_or_an_api_says_what_to_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_on(fake_engine(), "export") == 2
    assert "--tenant" in capsys.readouterr().err
