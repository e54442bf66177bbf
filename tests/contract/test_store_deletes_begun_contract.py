"""Deletes in flight (`Store.begin_delete`, `end_delete`, `deletes_begun`): recorded before a
delete's first change, removed after its last, and listed for the sweep, of every tenant, oldest
first, once begun long enough ago. Every backend passes these same assertions, on the clock the
test moves (`store_clock`), never a sleep."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from memory_engine.models.deletes import DeleteIntent, DeleteRoute
from memory_engine.ports import Store
from tests.contract.builders import OTHER_TENANT, SESSION, TENANT, THREAD
from tests.fakes.ports import SetClock

MINUTE = timedelta(minutes=1)


def begun(
    clock: SetClock, target: str, route: DeleteRoute = "engine", tenant: str = TENANT, session: str = SESSION
) -> DeleteIntent:
    return DeleteIntent(
        tenant=tenant,
        route=route,
        session_uuid=session if route == "engine" else "",
        target=target,
        thread=THREAD,
        memory_ids=[f"20260101_000000_{target[-6:]:0>6}"],
        begun=clock.now(),
    )


def test_a_delete_begun_is_listed_whole_once_its_time_is_reached(store: Store, store_clock: SetClock) -> None:
    # Given a delete begun now
    intent = begun(store_clock, "dialog-1")
    store.begin_delete(intent)

    # When the deletes begun up to a minute ago, then up to now, are listed
    earlier = store.deletes_begun(store_clock.now() - MINUTE, 10)
    now = store.deletes_begun(store_clock.now(), 10)

    # Then it is not among the first, and is among the second with all it recorded
    assert earlier == []
    assert now == [intent]


def test_a_user_forget_and_an_expiry_are_listed_whole_beside_the_other_routes(
    store: Store, store_clock: SetClock
) -> None:
    # Given a chat user's forget (its session, a userid with a '#'), and the sweep's expiry of two
    # memories (their sessions and turns, a Korean session name among them) begun a minute later
    forget = begun(store_clock, "user#7", route="user").model_copy(update={"session_uuid": "chat#7"})
    store_clock.advance(60)
    expiry = DeleteIntent(
        tenant=TENANT,
        route="expiry",
        target="0f3a9c",
        memory_ids=["20260101_000000_000001", "20260101_000000_000002"],
        sessions={"20260101_000000_000001": SESSION, "20260101_000000_000002": "세션-2"},
        dialogs={SESSION: ["d1", "d2"], "세션-2": ["d3"]},
        begun=store_clock.now(),
    )
    store.begin_delete(expiry)
    store.begin_delete(forget)

    # When the deletes begun up to now are listed
    listed = store.deletes_begun(store_clock.now(), 10)

    # Then both are, oldest first, with all they recorded; ending one leaves the other
    assert listed == [forget, expiry]
    store.end_delete(forget)
    assert store.deletes_begun(store_clock.now(), 10) == [expiry]


def test_deletes_begun_are_listed_oldest_first_of_every_tenant_up_to_the_limit(
    store: Store, store_clock: SetClock
) -> None:
    # Given three deletes begun a minute apart, of two tenants and both routes
    first = begun(store_clock, "dialog-1")
    store_clock.advance(60)
    second = begun(store_clock, "20260101_000000_aaaaaa", route="bank", tenant=OTHER_TENANT)
    store_clock.advance(60)
    third = begun(store_clock, "dialog-3")
    for intent in (third, first, second):
        store.begin_delete(intent)

    # When they are listed with a limit of two, then of ten
    two = store.deletes_begun(store_clock.now(), 2)
    every = store.deletes_begun(store_clock.now(), 10)

    # Then the two oldest come first, and all three in order
    assert two == [first, second]
    assert every == [first, second, third]
    assert store.deletes_begun(store_clock.now(), 0) == []


def test_a_delete_begun_again_replaces_its_record(store: Store, store_clock: SetClock) -> None:
    # Given a delete begun, and the same delete (same route, tenant, session, target) begun later
    store.begin_delete(begun(store_clock, "dialog-1"))
    store_clock.advance(600)
    again = begun(store_clock, "dialog-1")
    store.begin_delete(again)

    # Then one record is listed: the later one
    assert store.deletes_begun(store_clock.now(), 10) == [again]
    assert store.deletes_begun(store_clock.now() - MINUTE, 10) == []


def test_an_ended_delete_is_no_longer_listed_and_ending_it_again_does_nothing(
    store: Store, store_clock: SetClock
) -> None:
    # Given two deletes of one target through the two routes, and one of another session
    engine_route = begun(store_clock, "20260101_000000_bbbbbb")
    bank_route = begun(store_clock, "20260101_000000_bbbbbb", route="bank")
    other_session = begun(store_clock, "20260101_000000_bbbbbb", session="other-session")
    for intent in (engine_route, bank_route, other_session):
        store.begin_delete(intent)

    # When the engine route's is ended (twice), whatever its begun time says
    store.end_delete(engine_route.model_copy(update={"begun": store_clock.now() + MINUTE}))
    store.end_delete(engine_route)

    # Then the other two are still listed
    listed = store.deletes_begun(store_clock.now(), 10)
    assert sorted(intent.key for intent in listed) == sorted([bank_route.key, other_session.key])


def test_deletes_begun_outlive_the_handle(
    store: Store, store_clock: SetClock, reopen_store: Callable[[], Any]
) -> None:
    # Given a delete begun, and the process gone before it ended
    intent = begun(store_clock, "dialog-1")
    store.begin_delete(intent)

    # When another handle lists the deletes begun
    reopened = reopen_store()

    # Then it is there to finish
    assert reopened.deletes_begun(store_clock.now(), 10) == [intent]
