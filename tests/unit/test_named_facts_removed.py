"""Issue #45: a key fact the extractor named as replaced by a memory (`replaces_json`, the LLM
extractor's "update" of a current fact it was shown, of no one-value slot) holds again when that
memory goes, whichever way: with a turn it was made of (a dialog delete, its other turns
re-buffered) or expired and swept, where the memory is no longer readable once removed (the
store's removal hands back what it read). Both store backends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import ConsolidateRequest, DeleteRequest
from memory_engine.models.domain import Memory, Turn
from memory_engine.ports import Extraction, ExtractionContext
from memory_engine.usecases import consolidate, delete, sweep
from tests.fakes.engine import run_worker
from tests.fakes.ports import SetClock
from tests.unit.test_removed_facts import marks
from tests.unit.test_thread_fact_life import MARCH, TENANT, THREAD

DAY = timedelta(days=1)


class Naming(BuiltinExtractor):
    """The built-in extractor with the first turn's line as the key fact, naming `named` (a
    current fact's id) as updated by it, as the LLM extractor records a model's "update"."""

    named: str | None = None

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        extraction = super().extract(turns, context)
        line = f"{turns[0].user_name}: {turns[0].query}"
        extraction.fields = extraction.fields.model_copy(update={"key_facts": [line]})
        if self.named:
            extraction.metadata["replaces_json"] = json.dumps({"0": [self.named, "update"]})
        return extraction


@pytest.fixture
def naming(engine: Engine) -> Naming:
    engine.extractor = extractor = Naming()
    return extractor


def say(engine: Engine, session: str, lines: Sequence[str], when: datetime, **options: object) -> Memory:
    for n, query in enumerate(lines):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": session,
                "parent_session_uuid": THREAD,
                "user_name": "Mina",
                "new_dialog": {
                    "uuid": f"{session}-d{n}",
                    "query": query,
                    "answer": "Nice.",
                    "timestamp": when,
                },
                "options": {"force_summary": n == len(lines) - 1, **options},
            }
        )
        consolidate.run(engine, TENANT, request)
    [memory] = run_worker(engine)
    return memory


def named_update(engine: Engine, naming: Naming, **options: object) -> tuple[Memory, Memory]:
    """A fact of no one-value slot, then a memory of two turns the extractor said updates it."""
    walks = say(engine, "s1", ["I enjoy long walks by the sea."], MARCH)
    naming.named = f"{walks.memory_id}#0"
    cold = say(engine, "s2", ["The sea is too cold for me now!", "I swim indoors."], MARCH + DAY, **options)
    assert marks(engine, walks) == [(cold.memory_id, cold.stated_at)]
    return walks, cold


def test_deleting_a_turn_of_the_memory_the_extractor_named_an_update_makes_the_fact_hold_again(
    engine: Engine, naming: Naming
) -> None:
    # Given walks by the sea, which the extractor said a later memory of two turns updates
    walks, cold = named_update(engine, naming)

    # When one of that memory's turns is deleted: the memory goes, its other turn re-buffered
    result = delete.run(engine, TENANT, DeleteRequest(session_uuid="s2", dialog_uuid="s2-d0")).data
    assert (result.deleted_memories, result.rebuffered_dialogs) == ([cold.memory_id], ["s2-d1"])

    # Then the walks fact holds again
    assert marks(engine, walks) == []


def test_the_memory_the_extractor_named_an_update_expiring_makes_the_fact_hold_again(
    engine: Engine, naming: Naming, clock: SetClock
) -> None:
    # Given walks by the sea, which a later memory that lives two days was said to update
    walks, cold = named_update(engine, naming, memory_ttl_seconds=2 * 86_400)

    # When it expires and the sweep removes it
    clock.advance(3 * 86_400)
    assert sweep.expire(engine) == [(TENANT, cold.memory_id)]

    # Then the walks fact holds again
    assert marks(engine, walks) == []
