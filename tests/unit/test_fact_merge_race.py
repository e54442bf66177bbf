"""Bank `generate` (and chat memory, through `facts.merge`) updates and retires a fact with the
compare-and-set a PATCH uses: a correction or retirement that lands between the merge's read and
its write is never written over. The interleaving is forced, not timed: the store wrapper runs
the other request whole just before the merge's first write. On both store backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import Conflict
from memory_engine.extraction.fact_extractor import FactExtraction, FactOperation
from memory_engine.models.bank import CreateMemoryRequest, GenerateMemoriesRequest, PatchMemoryRequest
from memory_engine.usecases import bank, bank_generate
from memory_engine.usecases.compare_and_set import MAX_ATTEMPTS
from tests.fakes.engine import ENGINE_BACKENDS

TENANT = "acme"
SCOPE = {"user_id": "u-race"}


@dataclass
class Scripted:
    """A fact extractor that answers one operation on the scope's first existing fact."""

    op: str
    fact: str

    def extract_facts(
        self, messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
    ) -> FactExtraction:
        [(fact_id, _)] = existing
        return FactExtraction(operations=[FactOperation(op=self.op, id=fact_id, fact=self.fact)])  # type: ignore[arg-type]


class Interleaving:
    """The engine's store, running `before` just before each of its first `times` updates."""

    def __init__(self, inner: Any, before: Callable[[], None], times: int = 1) -> None:
        self._inner, self._before, self._left = inner, before, times
        self.refused = 0

    def update_memory(self, memory: Any, **kwargs: Any) -> bool:
        if self._left:
            self._left -= 1
            self._before()
        written: bool = self._inner.update_memory(memory, **kwargs)
        self.refused += not written
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        yield engine


def stored_fact(engine: Engine, text: str) -> str:
    return bank.create(engine, TENANT, CreateMemoryRequest(fact=text, scope=SCOPE)).name.removeprefix(
        "memories/"
    )


def generate(engine: Engine, text: str) -> list[tuple[str, str]]:
    events = [{"content": {"role": "user", "parts": [{"text": text}]}}]
    request = GenerateMemoriesRequest.model_validate(
        {"scope": SCOPE, "direct_contents_source": {"events": events}}
    )
    answer = bank_generate.run(engine, TENANT, request)
    return [(found.action, found.memory.fact) for found in answer.generated_memories]


def patching(engine: Engine, memory_id: str, fact: str | None) -> Callable[[], None]:
    inner = engine.store

    def run() -> None:
        change = PatchMemoryRequest(fact=fact) if fact is not None else PatchMemoryRequest(retire=True)
        bank.patch(replace(engine, store=inner), TENANT, memory_id, change)

    return run


def test_an_update_over_a_correction_made_meanwhile_keeps_both_wordings(engine: Engine) -> None:
    # Given a fact, and a generate that rewords it while a PATCH corrects it in between
    memory_id = stored_fact(engine, "Mina lives in Busan.")
    engine.facts = Scripted("update", "Mina moved to Seoul.")
    racing = Interleaving(engine.store, patching(engine, memory_id, "Mina lives in Busan, Haeundae."))

    # When the generate runs over its stale read
    changes = generate(replace(engine, store=racing), "I moved to Seoul.")

    # Then its first write was refused, and it reworded the fact over the correction
    assert racing.refused == 1
    assert changes == [("UPDATED", "Mina moved to Seoul.")]
    history = bank.revisions(engine, TENANT, memory_id).revisions
    assert [(revision.fact, revision.reason) for revision in history] == [
        ("Mina lives in Busan.", "correct"),
        ("Mina lives in Busan, Haeundae.", "update"),
        ("Mina moved to Seoul.", None),
    ]


def test_a_retirement_over_a_correction_made_meanwhile_retires_the_corrected_wording(engine: Engine) -> None:
    # Given a fact a generate contradicts while a PATCH corrects it in between
    memory_id = stored_fact(engine, "Mina works as a nurse.")
    engine.facts = Scripted("delete", "Mina works as a nurse.")
    racing = Interleaving(engine.store, patching(engine, memory_id, "Mina works as a night nurse."))

    # When the generate runs over its stale read
    changes = generate(replace(engine, store=racing), "I quit nursing.")

    # Then the fact is retired with the correction's wording, and the first wording is its revision
    assert racing.refused == 1
    assert changes == [("DELETED", "Mina works as a night nurse.")]
    retired = bank.get(engine, TENANT, memory_id)
    assert retired.invalidAt is not None
    history = bank.revisions(engine, TENANT, memory_id).revisions
    assert [(revision.fact, revision.reason) for revision in history] == [
        ("Mina works as a nurse.", "correct"),
        ("Mina works as a night nurse.", "contradiction"),
    ]


def test_an_update_of_a_fact_retired_meanwhile_is_stored_as_a_new_fact(engine: Engine) -> None:
    # Given a fact a generate rewords while a PATCH retires it in between
    memory_id = stored_fact(engine, "Mina lives in Busan.")
    engine.facts = Scripted("update", "Mina moved to Seoul.")
    racing = Interleaving(engine.store, patching(engine, memory_id, None))

    # When the generate runs over its stale read
    changes = generate(replace(engine, store=racing), "I moved to Seoul.")

    # Then the retired fact stays as it was retired, and what was said is a new fact: not lost
    assert changes == [("CREATED", "Mina moved to Seoul.")]
    kept = bank.get(engine, TENANT, memory_id)
    assert (kept.fact, kept.invalidAt is not None) == ("Mina lives in Busan.", True)


def test_a_fact_that_keeps_changing_under_a_merge_is_a_conflict(engine: Engine) -> None:
    # Given a fact corrected by another request before each of the merge's writes
    memory_id = stored_fact(engine, "Mina lives in Busan.")
    engine.facts = Scripted("update", "Mina moved to Seoul.")
    wordings = iter(f"Mina lives in Busan, block {n}." for n in range(MAX_ATTEMPTS))
    inner = engine.store

    def correct() -> None:
        bank.patch(replace(engine, store=inner), TENANT, memory_id, PatchMemoryRequest(fact=next(wordings)))

    racing = Interleaving(inner, correct, times=MAX_ATTEMPTS)

    # When the generate runs / Then it gives up after its bounded rounds with a 409 naming the fact
    with pytest.raises(Conflict, match=f"memories/{memory_id} kept changing"):
        generate(replace(engine, store=racing), "I moved to Seoul.")
    assert racing.refused == MAX_ATTEMPTS
    # And every correction is kept, the last one current
    assert bank.get(engine, TENANT, memory_id).fact == f"Mina lives in Busan, block {MAX_ATTEMPTS - 1}."
