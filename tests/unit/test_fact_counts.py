"""Each memory-bank scope's count of facts (what the inspector lists beside its scopes) is kept as
the facts change, never counted by reading them: it stays right through create, correct, retire,
supersede, delete, fork, expiry and forgetting a user. A scope counts the facts it stores,
retired ones included (they stay as history); an expired fact until the sweep removes it.

Every test runs once per store/queue backend (`ENGINE_BACKENDS`: SQLite triggers; DynamoDB count
items written in each fact's transaction), on a clock the test moves, never a sleep."""

from __future__ import annotations

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, ForkRequest
from memory_engine.models.bank import CreateMemoryRequest, PatchMemoryRequest
from memory_engine.models.domain import scope_key
from memory_engine.usecases import bank, consolidate, facts, forget_user, fork, sweep
from memory_engine.usecases.chat_memory import user_scope
from tests.fakes.ports import SetClock

TENANT = "acme"
ANN, BO = {"user_id": "ann"}, {"user_id": "bo", "app": "rpg"}
HOUR = 3600


def create(engine: Engine, fact: str, scope: dict[str, str] = ANN, **expiry: object) -> str:
    request = CreateMemoryRequest.model_validate({"fact": fact, "scope": scope, **expiry})
    return bank.create(engine, TENANT, request).name.removeprefix("memories/")


def counts(engine: Engine) -> dict[str, int]:
    """The tenant's scopes and their counts, as the inspector's page of scopes lists them."""
    return {scope_key(s.scope): s.facts for s in engine.store.fact_scopes(TENANT)}


def test_a_scopes_count_follows_its_facts_through_create_correct_retire_supersede_and_delete(
    engine: Engine, clock: SetClock
) -> None:
    # Given three facts of Ann and one of Bo
    first, second, third = (create(engine, f"Ann fact number {n}.") for n in range(3))
    only = create(engine, "Bo plays the cello.", BO)
    assert counts(engine) == {scope_key(ANN): 3, scope_key(BO): 1}

    # When one is corrected and one retired, both stay as the scope's facts
    bank.patch(engine, TENANT, first, PatchMemoryRequest(fact="Ann fact number zero, corrected."))
    bank.patch(engine, TENANT, second, PatchMemoryRequest(retire=True))
    assert counts(engine) == {scope_key(ANN): 3, scope_key(BO): 1}

    # When a fact is superseded (retired, naming the new fact that states its slot), the new one counts
    clock.advance(1)
    [new] = facts.create(engine, TENANT, ANN, ["Ann fact number two, as it is now."])
    stored = engine.store.get_memory(TENANT, third)
    assert stored is not None
    assert engine.store.update_memory(facts.retired(stored, clock.now(), "contradiction", new.memory_id))
    assert counts(engine) == {scope_key(ANN): 4, scope_key(BO): 1}

    # When facts are deleted, the count goes down, and a scope's last fact takes its scope along
    bank.delete(engine, TENANT, first)
    bank.delete(engine, TENANT, only)
    assert counts(engine) == {scope_key(ANN): 3}


def test_forking_a_session_leaves_the_scopes_counts(engine: Engine) -> None:
    # Given facts and a session with turns in a thread
    create(engine, "Ann lives in Seoul.")
    create(engine, "Ann has a cat.")
    for n in (1, 2):
        body = {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": f"turn number {n}", "answer": "ok"},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(body))

    # When the session is forked
    request = ForkRequest(source_session_uuid="s1", target_session_uuid="s2", cutoff_dialog_uuid="d2")
    fork.run(engine, TENANT, request)

    # Then the counts are what they were
    assert counts(engine) == {scope_key(ANN): 2}


def test_an_expired_fact_counts_until_the_sweep_removes_it(engine: Engine, clock: SetClock) -> None:
    # Given a fact that expires in an hour beside one that never does
    create(engine, "Ann is in Busan this week.", ttl_seconds=HOUR)
    create(engine, "Ann lives in Seoul.")

    # When it has expired, it still counts (it is stored) until the sweep removes it
    clock.advance(2 * HOUR)
    assert counts(engine) == {scope_key(ANN): 2}
    sweep.expire(engine)

    # Then the count is that of the facts left
    assert counts(engine) == {scope_key(ANN): 1}
    assert sweep.expire(engine) == []  # a second sweep changes nothing
    assert counts(engine) == {scope_key(ANN): 1}


def test_forgetting_a_user_takes_their_scope_and_its_count_away(engine: Engine) -> None:
    # Given a chat user's facts beside another scope's
    userid = "0b9c2a4e-7d4f-4b8a-9f0e-3c2d1e0f9a8b"
    for n in range(3):
        create(engine, f"The user said thing number {n}.", user_scope(userid))
    create(engine, "Ann lives in Seoul.")

    # When the user is forgotten
    forget_user.forget(engine, TENANT, userid)

    # Then their scope is gone from the listing, the other one unchanged
    assert counts(engine) == {scope_key(ANN): 1}
