"""Export and import (docs/export.md): a tenant's turns, memories, facts and character registries
out as versioned records without vectors, and back in, idempotently, mapped, re-embedded.

The round trip goes local (SQLite) → DynamoDB on moto → local, as a move to a deployed stack and
back would, and checks counts and contents record by record."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.models.bank import CreateMemoryRequest
from memory_engine.models.export import Cursor, ExportRecord, Selection
from memory_engine.usecases import bank, consolidate, export, import_records, retrieve
from tests.fakes.engine import ENGINE_BACKENDS, aws_engine, local_engine, run_worker
from tests.fakes.ports import SetClock

TENANT = "acme"
EVERYTHING = Selection()


def say(
    engine: Engine,
    session: str,
    thread: str,
    uuid: str,
    query: str,
    force: bool = False,
    tenant: str = TENANT,
) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": thread,
            "new_dialog": {"uuid": uuid, "query": query, "answer": "I see."},
            "options": {"force_summary": force},
        }
    )
    consolidate.run(engine, tenant, request)


def fill(engine: Engine, tenant: str = TENANT) -> None:
    """Two threads: extracted memories, still-buffered turns, a registry; facts of two scopes,
    one of them expiring."""
    say(engine, "s1", "thread-1", "d1", "I live in Busan with my cat Mochi.", tenant=tenant)
    say(engine, "s1", "thread-1", "d2", "Mochi likes tuna.", force=True, tenant=tenant)
    say(engine, "s2", "thread-1", "d3", "I moved to Seoul last month.", tenant=tenant)
    say(engine, "s3", "thread-2", "d4", "My sister Jiwoo plays the cello.", force=True, tenant=tenant)
    say(engine, "s3", "thread-2", "d5", "민수는 다음 달에 제주도에 가.", tenant=tenant)
    run_worker(engine)
    engine.store.save_characters(tenant, "thread-1", {"Mochi": ["모찌"]})
    for fact, scope, ttl in (
        ("The user is allergic to peanuts.", {"user_id": "123"}, None),
        ("The user is in Busan this week.", {"user_id": "123"}, 86_400),
        ("The user plays chess.", {"user_id": "456", "app": "rpg"}, None),
        ("Thread one's user likes tea.", {"parent_session_uuid": "thread-1"}, None),
    ):
        bank.create(engine, tenant, CreateMemoryRequest(fact=fact, scope=scope, ttl_seconds=ttl))


def records(engine: Engine, selection: Selection = EVERYTHING, tenant: str = TENANT) -> list[ExportRecord]:
    return list(export.walk(engine.store, tenant, selection))


def canonical(found: list[ExportRecord]) -> list[str]:
    """The records as sorted JSON lines: what must survive a round trip unchanged."""
    return sorted(record.model_dump_json() for record in found)


def kinds(found: list[ExportRecord]) -> Counter[str]:
    return Counter(record.kind for record in found)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param](clock=SetClock()) as engine:
        yield engine


def test_an_export_holds_every_record_without_tenant_or_vectors(engine: Engine) -> None:
    fill(engine)

    found = records(engine)

    # (the extraction of thread-2 registered its characters too: two registries)
    assert kinds(found) == {"session": 3, "turn": 5, "memory": 2 + 4, "characters": 2}
    for record in found:
        data = record.data()
        assert record.version == 1
        assert "tenant" not in data
        assert not {"embedding", "turn_embeddings", "window_embeddings"} & data.keys()
    turns = [record.data() for record in found if record.kind == "turn"]
    assert {turn["status"] for turn in turns} == {"extracted", "buffered"}


def test_a_round_trip_local_to_aws_and_back_loses_nothing() -> None:
    with local_engine(clock=SetClock()) as source:
        fill(source)
        exported = records(source)
    with aws_engine(clock=SetClock()) as deployed:
        first = import_records.run(deployed, TENANT, exported)
        assert first.written == kinds(exported)
        from_aws = records(deployed)
        assert canonical(from_aws) == canonical(exported)
    with local_engine(clock=SetClock()) as back:
        import_records.run(back, "acme-restored", from_aws)
        restored = records(back, tenant="acme-restored")

    assert canonical(restored) == canonical(exported)
    assert kinds(restored) == kinds(exported)


def test_an_imported_tenant_is_searchable_with_the_targets_embedder(engine: Engine) -> None:
    with local_engine(clock=SetClock()) as source:
        fill(source)
        exported = records(source)

    import_records.run(engine, TENANT, exported)

    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-2"], "user_input": {"query": "Jiwoo cello sister"}}
    )
    hits = retrieve.run(engine, TENANT, request).data
    assert hits and "cello" in json.dumps([hit.model_dump(mode="json") for hit in hits])
    for memory in engine.store.iter_memories(TENANT):
        assert memory.embedding, memory.memory_id
        if memory.session_uuid:
            assert len(memory.turn_embeddings) == len(memory.source_dialog_uuids)


def test_importing_twice_writes_once(engine: Engine) -> None:
    with local_engine(clock=SetClock()) as source:
        fill(source)
        exported = records(source)
    import_records.run(engine, TENANT, exported)
    once = canonical(records(engine))

    again = import_records.run(engine, TENANT, exported)

    assert sum(again.written.values()) == 0
    assert again.existing == kinds(exported)
    assert canonical(records(engine)) == once


def test_import_maps_scopes_and_threads(engine: Engine) -> None:
    with local_engine(clock=SetClock()) as source:
        fill(source)
        exported = records(source)

    mapping = {"user_id": {"123": "u-9"}, "parent_session_uuid": {"thread-1": "moved-1"}}
    import_records.run(engine, TENANT, exported, mapping)

    assert {s.parent_session_uuid for s in engine.store.list_sessions(TENANT)} == {"moved-1", "thread-2"}
    facts = [
        record.data()
        for record in records(engine)
        if record.kind == "memory" and not record.data()["session_uuid"]
    ]
    scopes = sorted(json.dumps(fact["scope"], sort_keys=True) for fact in facts)
    assert scopes == sorted(
        json.dumps(scope, sort_keys=True)
        for scope in (
            {"user_id": "u-9"},
            {"user_id": "u-9"},
            {"user_id": "456", "app": "rpg"},
            {"parent_session_uuid": "moved-1"},
        )
    )
    assert engine.store.get_characters(TENANT, "moved-1") == {"Mochi": ["모찌"]}
    assert engine.store.list_memories(TENANT, "s1")[0].parent_session_uuid == "moved-1"


def test_one_thread_exports_its_sessions_facts_and_registry_only(engine: Engine) -> None:
    fill(engine)

    found = records(engine, Selection(thread="thread-1"))

    assert kinds(found) == {"session": 2, "turn": 3, "memory": 1 + 1, "characters": 1}
    assert {r.data()["parent_session_uuid"] for r in found if r.kind in ("session", "memory")} == {"thread-1"}
    assert {r.data()["session_uuid"] for r in found if r.kind == "turn"} == {"s1", "s2"}


def test_one_users_scope_exports_their_facts_only(engine: Engine) -> None:
    fill(engine)

    found = records(engine, Selection(scope={"user_id": "123"}))

    assert sorted(record.data()["fields"]["summary"] for record in found) == [
        "The user is allergic to peanuts.",
        "The user is in Busan this week.",
    ]


def test_an_expired_fact_is_not_exported(engine: Engine) -> None:
    fill(engine)
    assert isinstance(engine.clock, SetClock)
    engine.clock.advance(timedelta(days=2).total_seconds())

    facts = [r.data()["fields"]["summary"] for r in records(engine, Selection(scope={"user_id": "123"}))]

    assert facts == ["The user is allergic to peanuts."]


def test_every_page_is_bounded_and_the_cursor_walks_them_all(engine: Engine, monkeypatch: Any) -> None:
    fill(engine)
    monkeypatch.setattr(export, "SESSIONS_PER_PAGE", 1)
    monkeypatch.setattr(export, "MEMORIES_PER_PAGE", 2)
    pages, cursor = 0, None
    collected: list[ExportRecord] = []
    while True:
        page = export.page(engine.store, TENANT, EVERYTHING, cursor)
        collected += page.records
        pages += 1
        if page.next_cursor is None:
            break
        cursor = Cursor.decode(page.next_cursor)

    assert pages >= 3 + 3
    monkeypatch.undo()
    assert canonical(collected) == canonical(records(engine))


def test_a_record_of_another_version_or_out_of_order_is_refused_naming_the_line(engine: Engine) -> None:
    with pytest.raises(ValueError, match="version 2"):
        ExportRecord.model_validate({"kind": "turn", "version": 2})
    turn = {"kind": "turn", "version": 1, "session_uuid": "s9", "dialog_uuid": "d9", "seq": 0, "query": "hi"}
    with pytest.raises(InvalidInput, match="line 1: a turn record's timestamp: Field required"):
        import_records.run(engine, TENANT, [ExportRecord.model_validate(turn)])
    when = {"timestamp": "2026-03-18T04:00:37Z", "created_at": "2026-03-18T04:00:38Z"}
    with pytest.raises(InvalidInput, match="before that session"):
        import_records.run(engine, TENANT, [ExportRecord.model_validate(turn | when)])


def test_a_bad_cursor_is_a_4xx_naming_it() -> None:
    with pytest.raises(InvalidInput) as refused:
        Cursor.decode("not-a-cursor")

    assert refused.value.errors[0]["field"] == "cursor"


def test_a_retired_facts_history_travels_with_it(engine: Engine) -> None:
    from memory_engine.models.bank import PatchMemoryRequest

    with local_engine(clock=SetClock()) as source:
        name = bank.create(
            source, TENANT, CreateMemoryRequest(fact="The user lives in Busan.", scope={"user_id": "1"})
        )
        memory_id = name.name.removeprefix("memories/")
        bank.patch(source, TENANT, memory_id, PatchMemoryRequest(fact="The user lives in Seoul."))
        exported = records(source)

    import_records.run(engine, TENANT, exported)

    moved = engine.store.get_memory(TENANT, memory_id)
    assert moved is not None and moved.content == "The user lives in Seoul."
    assert [revision.fact for revision in moved.life.revisions] == ["The user lives in Busan."]
