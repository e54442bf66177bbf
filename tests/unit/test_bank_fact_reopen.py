"""Issue #45: a memory-bank fact a merge retired as replaced by another (`supersededBy`) holds
again when that other fact is deleted, by name or expired and swept, also when the other fact
was written before it recorded what it replaced (found in its scope then); a fact retired with
no successor, or replaced by a fact still there, stays history. Both store backends."""

from __future__ import annotations

import pytest

from memory_engine.engine import Engine
from memory_engine.models.bank import CreateMemoryRequest, GenerateMemoriesRequest, PatchMemoryRequest
from memory_engine.usecases import bank, bank_generate, facts, sweep
from tests.fakes.ports import SetClock

TENANT = "acme"
SCOPE = {"user_id": "u-jobs"}


def generate(engine: Engine, text: str) -> None:
    events = [{"content": {"role": "user", "parts": [{"text": text}]}}]
    request = GenerateMemoriesRequest.model_validate(
        {"scope": SCOPE, "direct_contents_source": {"events": events}}
    )
    bank_generate.run(engine, TENANT, request)


def create(engine: Engine, fact: str, **options: object) -> str:
    request = CreateMemoryRequest.model_validate({"fact": fact, "scope": SCOPE, **options})
    return bank.create(engine, TENANT, request).name.removeprefix("memories/")


def replaced(engine: Engine, **options: object) -> tuple[str, str]:
    """Two job facts (`options` for the second), then a new job: the second reworded to it, the
    first retired as replaced by it."""
    nurse = create(engine, "The user works as a nurse.")
    night = create(engine, "I work as a night nurse.", **options)
    generate(engine, "요즘 출판사에서 편집자로 일해.")
    assert bank.get(engine, TENANT, night).fact == "요즘 출판사에서 편집자로 일해."
    assert bank.get(engine, TENANT, nurse).supersededBy == night
    return nurse, night


def holds(engine: Engine, memory_id: str) -> bool:
    fact = bank.get(engine, TENANT, memory_id)
    return fact.invalidAt is None and fact.supersededBy is None


def test_deleting_the_fact_that_replaced_another_makes_the_other_hold_again(engine: Engine) -> None:
    # Given a nurse fact retired as replaced by the editor fact a merge reworded
    retired, successor = replaced(engine)

    # When the editor fact is deleted by name
    bank.delete(engine, TENANT, successor)

    # Then the nurse fact holds again, and its last revision is current
    assert holds(engine, retired)
    assert bank.revisions(engine, TENANT, retired).revisions[-1].invalidAt is None


def test_a_replacing_fact_that_expired_and_was_swept_makes_the_other_hold_again(
    engine: Engine, clock: SetClock
) -> None:
    # Given a nurse fact retired as replaced by a fact that lives a day
    retired, successor = replaced(engine, ttl_seconds=86_400)

    # When it expires and the sweep removes it
    clock.advance(2 * 86_400)
    assert (TENANT, successor) in sweep.expire(engine)

    # Then the nurse fact holds again
    assert holds(engine, retired)


def test_deleting_a_fact_that_replaced_nothing_leaves_a_retired_fact_retired(engine: Engine) -> None:
    # Given a retired nurse fact, its successor still there, and an unrelated fact
    retired, _ = replaced(engine)
    other = create(engine, "I have a cat named Luna.")

    # When the unrelated fact is deleted
    bank.delete(engine, TENANT, other)

    # Then the retired fact stays history
    assert not holds(engine, retired)


def written_the_old_way(engine: Engine, successor: str) -> None:
    """The successor as a merge wrote it before successors recorded what they replaced: without
    `replaces_facts_json` in its metadata (the retired fact still names it as `supersededBy`)."""
    fact = engine.store.get_memory(TENANT, successor)
    assert fact is not None and facts.REPLACES_FACTS in fact.metadata
    metadata = {key: value for key, value in fact.metadata.items() if key != facts.REPLACES_FACTS}
    assert engine.store.update_memory(fact.model_copy(update={"metadata": metadata}))


def test_deleting_a_replacing_fact_written_before_it_recorded_what_it_replaced_reopens_from_its_scope(
    engine: Engine,
) -> None:
    # Given a nurse fact retired as replaced by the editor fact, written the old way, and a cat
    # fact retired by its user (no successor)
    retired, successor = replaced(engine)
    written_the_old_way(engine, successor)
    cat = create(engine, "I have a cat named Luna.")
    bank.patch(engine, TENANT, cat, PatchMemoryRequest(retire=True))

    # When the editor fact is deleted by name
    bank.delete(engine, TENANT, successor)

    # Then the nurse fact, whose supersededBy named it, holds again; the cat fact stays history
    assert holds(engine, retired)
    assert not holds(engine, cat)


def test_a_replacing_fact_written_the_old_way_that_expired_and_was_swept_reopens_from_its_scope(
    engine: Engine, clock: SetClock
) -> None:
    # Given a nurse fact retired as replaced by a fact that lives a day, written the old way
    retired, successor = replaced(engine, ttl_seconds=86_400)
    written_the_old_way(engine, successor)

    # When it expires and the sweep removes it
    clock.advance(2 * 86_400)
    assert (TENANT, successor) in sweep.expire(engine)

    # Then the nurse fact holds again
    assert holds(engine, retired)


def test_deleting_a_fact_no_merge_reworded_reads_none_of_its_scope(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a retired nurse fact, and a fact created by name that no merge ever reworded
    retired, _ = replaced(engine)
    other = create(engine, "I have a cat named Luna.")
    pages: list[str] = []
    listing = engine.store.list_thread_memories
    monkeypatch.setattr(
        engine.store, "list_thread_memories", lambda *args, **kw: pages.append("page") or listing(*args, **kw)
    )

    # When it is deleted
    bank.delete(engine, TENANT, other)

    # Then no page of the scope was read, and the retired fact stays history
    assert pages == []
    assert not holds(engine, retired)


def test_the_scope_read_for_a_fact_written_the_old_way_is_bounded(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an editor fact written the old way, and a scope read at most two pages of one fact
    retired, successor = replaced(engine)
    written_the_old_way(engine, successor)
    monkeypatch.setattr(facts, "OLD_SUCCESSOR_SCANNED", 2)
    monkeypatch.setattr(facts, "_SCOPE_PAGE", 1)
    for n in range(3):
        create(engine, f"I like tea number {n}.")
    pages: list[str] = []
    listing = engine.store.list_thread_memories
    monkeypatch.setattr(
        engine.store, "list_thread_memories", lambda *args, **kw: pages.append("page") or listing(*args, **kw)
    )

    # When the editor fact is deleted
    bank.delete(engine, TENANT, successor)

    # Then two pages were read: the nurse fact, the oldest, was in them and holds again
    assert len(pages) == 2
    assert holds(engine, retired)
