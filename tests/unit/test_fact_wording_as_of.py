"""Issue #45: `as_of` on a reworded bank fact. A PATCH that rewords a fact keeps the old wording
as a revision; a retrieve `as_of` a moment before the PATCH returns the old wording (stated when
it was), one after it the new. Both store backends, on a clock the test moves."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.models.api import RetrievedMemory, RetrieveRequest
from memory_engine.models.bank import CreateMemoryRequest, PatchMemoryRequest
from memory_engine.models.domain import scope_key
from memory_engine.usecases import bank, retrieve
from tests.fakes.ports import SetClock

TENANT = "acme"
SCOPE = {"user_id": "u-wording"}
DAY = 86_400


def ask(engine: Engine, query: str, **options: object) -> list[RetrievedMemory]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": [scope_key(SCOPE)], "user_input": {"query": query}, "options": options}
    )
    return retrieve.run(engine, TENANT, request).data


@pytest.fixture
def reworded(engine: Engine, clock: SetClock) -> tuple[str, datetime, datetime]:
    """A fact stored, then corrected by a PATCH ten days later: (its id, a moment between, the PATCH's)."""
    created = bank.create(
        engine, TENANT, CreateMemoryRequest(fact="Mina's dog Max is a beagle.", scope=SCOPE)
    )
    memory_id = created.name.removeprefix("memories/")
    clock.advance(5 * DAY)
    between = clock.now()
    clock.advance(5 * DAY)
    patched_at = clock.now()
    bank.patch(engine, TENANT, memory_id, PatchMemoryRequest(fact="Mina's dog Max is a corgi."))
    clock.advance(DAY)
    return memory_id, between, patched_at


def test_as_of_before_the_patch_returns_the_old_wording(
    engine: Engine, reworded: tuple[str, datetime, datetime]
) -> None:
    memory_id, between, _ = reworded

    [hit] = ask(engine, "What kind of dog is Max?", as_of=between.isoformat())

    assert (hit.memory_id, hit.content) == (memory_id, "Mina's dog Max is a beagle.")
    assert hit.stated_at is not None and hit.stated_at < between


def test_as_of_after_the_patch_and_no_as_of_return_the_new_wording(
    engine: Engine, reworded: tuple[str, datetime, datetime], clock: SetClock
) -> None:
    memory_id, _, patched_at = reworded

    after = ask(engine, "What kind of dog is Max?", as_of=(clock.now() - timedelta(hours=1)).isoformat())
    now = ask(engine, "What kind of dog is Max?")

    assert [(hit.memory_id, hit.content) for hit in after] == [(memory_id, "Mina's dog Max is a corgi.")]
    assert [(hit.memory_id, hit.content, hit.stated_at) for hit in now] == [
        (memory_id, "Mina's dog Max is a corgi.", patched_at)
    ]


def test_history_as_of_between_holds_no_revision_yet_and_now_holds_the_old_wording(
    engine: Engine, reworded: tuple[str, datetime, datetime]
) -> None:
    _, between, patched_at = reworded

    [then] = ask(engine, "Max dog", as_of=between.isoformat(), history=True)
    [now] = ask(engine, "Max dog", history=True)

    assert then.history == []
    assert [(past.fact, past.invalid_at, past.reason) for past in now.history or []] == [
        ("Mina's dog Max is a beagle.", patched_at, "correct")
    ]
