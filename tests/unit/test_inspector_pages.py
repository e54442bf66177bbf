"""The inspector's thread list in pages: sessions by thread and fact scopes, each with its cursor,
on every store backend (`ENGINE_BACKENDS`: SQLite, and DynamoDB on moto)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.domain import scope_key
from memory_engine.usecases import consolidate, facts, inspection
from tests.fakes.engine import ENGINE_BACKENDS

TENANT = "acme"


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


def say(engine: Engine, session: str, thread: str) -> None:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": thread,
            "new_dialog": {"uuid": f"{session}-d1", "query": "hello", "answer": "hi"},
        }
    )
    consolidate.run(engine, TENANT, request)


def test_the_thread_list_pages_sessions_and_scopes_each_with_its_cursor(engine: Engine) -> None:
    # Given five sessions in two threads and facts in three scopes
    for n in range(5):
        say(engine, f"s{n}", f"t{n % 2}")
    scopes = [{"user_id": str(n)} for n in range(3)]
    for n, scope in enumerate(scopes):
        facts.create(engine, TENANT, scope, [f"fact {k}" for k in range(n + 1)])

    # When the first page of two is read, then the rest of each list by its own cursor
    first = inspection.threads(engine, TENANT, limit=2)
    sessions = [s.session_uuid for thread in first.threads for s in thread.sessions]
    after = first.next_after
    while after is not None:
        page = inspection.threads(engine, TENANT, after=after, limit=2)
        assert page.scopes == []  # a page of sessions alone
        sessions += [s.session_uuid for thread in page.threads for s in thread.sessions]
        after = page.next_after
    counted = {scope_key(s.scope): s.facts for s in first.scopes}
    scopes_after = first.next_scopes_after
    while scopes_after is not None:
        page = inspection.threads(engine, TENANT, scopes_after=scopes_after, limit=2)
        assert page.threads == []
        counted |= {scope_key(s.scope): s.facts for s in page.scopes}
        scopes_after = page.next_scopes_after

    # Then every session and every scope came once, each scope with its count of facts
    assert sorted(sessions) == [f"s{n}" for n in range(5)]
    assert len(sessions) == 5
    assert counted == {scope_key(scope): n + 1 for n, scope in enumerate(scopes)}


def test_the_thread_list_reads_no_memory_to_count_facts(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts.create(engine, TENANT, {"user_id": "ann"}, ["likes tea", "lives in Seoul"])

    def refused(*_: object, **__: object) -> None:
        raise AssertionError("the thread list read the tenant's memories")

    monkeypatch.setattr(type(engine.store), "iter_memories", refused)
    monkeypatch.setattr(type(engine.store), "list_thread_memories", refused)

    [scope] = inspection.threads(engine, TENANT).scopes
    assert (scope.scope, scope.facts) == ({"user_id": "ann"}, 2)


def test_a_cursor_the_api_did_not_give_is_a_400_naming_after(engine: Engine) -> None:
    with pytest.raises(InvalidInput) as refused:
        inspection.threads(engine, TENANT, after="not-a-cursor")
    assert refused.value.errors == [{"field": "after", "message": "not a next_after of this route"}]
