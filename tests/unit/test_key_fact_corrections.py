"""Issue #45: an operator or the user corrects or retires one key fact of a memory extracted from
dialogue, with history, as bank facts are (`usecases.key_facts`). Both store backends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, InvalidInput
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import RetrievedMemory, RetrieveRequest
from memory_engine.models.bank import CreateMemoryRequest, PatchMemoryRequest
from memory_engine.models.domain import Memory
from memory_engine.models.life import KeyFactLife
from memory_engine.usecases import bank, inspection, key_facts, retrieve
from tests.fakes.engine import ENGINE_BACKENDS
from tests.fakes.ports import SetClock
from tests.unit.test_thread_fact_life import MARCH, TENANT, THREAD, say


@pytest.fixture
def clock() -> SetClock:
    return SetClock(MARCH)


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest, clock: SetClock) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param](clock=clock) as engine:
        engine.extractor = BuiltinExtractor()
        yield engine


@pytest.fixture
def memory(engine: Engine, clock: SetClock) -> Memory:
    said = say(engine, "s1", "I have a dog named Max, a beagle.", "Cute!", MARCH)
    assert said.fields.key_facts, "the built-in extractor keeps the statement as a key fact"
    clock.advance(86_400)
    return said


def ask(engine: Engine, query: str, **options: object) -> list[RetrievedMemory]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": [THREAD], "user_input": {"query": query}, "options": options}
    )
    return retrieve.run(engine, TENANT, request).data


def test_a_corrected_key_fact_keeps_its_earlier_wording_as_history(
    engine: Engine, memory: Memory, clock: SetClock
) -> None:
    # Given a memory whose key fact says Max is a beagle
    before = memory.fields.key_facts[0]

    # When the operator corrects it
    view = key_facts.patch_key_fact(
        engine, TENANT, memory.memory_id, 0, PatchMemoryRequest(fact="Mina: Max is a corgi.")
    )

    # Then the stored memory says the new wording, and its history the old one, ended now
    stored = engine.store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and stored.fields.key_facts[0] == "Mina: Max is a corgi."
    [earlier, now] = view.revisions
    assert (earlier.fact, earlier.reason, earlier.invalidAt) == (before, "correct", now.validFrom)
    assert now.fact == "Mina: Max is a corgi." and now.invalidAt is None
    assert key_facts.list_key_facts(engine, TENANT, memory.memory_id).keyFacts[0] == view
    # And a retrieve finds the new wording by its words, with the old one in its history
    [hit] = [hit for hit in ask(engine, "corgi", history=True) if hit.memory_id == memory.memory_id]
    assert [(past.fact, past.reason) for past in hit.history or []] == [(before, "correct")]


def test_a_retired_key_fact_no_longer_holds_and_stays_readable(engine: Engine, memory: Memory) -> None:
    # When the user retires the key fact about the dog
    view = key_facts.patch_key_fact(engine, TENANT, memory.memory_id, 0, PatchMemoryRequest(retire=True))

    # Then it reads as ended by a retirement, and the memory is not current for a question about pets
    [only] = view.revisions
    assert only.reason == "retire" and only.invalidAt is not None and only.supersededBy is None
    hits = [hit for hit in ask(engine, "Does Mina have a dog now?") if hit.memory_id == memory.memory_id]
    assert hits and not hits[0].current
    # And it cannot be changed again: it is history
    with pytest.raises(Conflict, match="stopped holding"):
        key_facts.patch_key_fact(engine, TENANT, memory.memory_id, 0, PatchMemoryRequest(fact="x"))


def test_an_index_out_of_range_is_a_4xx_naming_it(engine: Engine, memory: Memory) -> None:
    with pytest.raises(InvalidInput) as raised:
        key_facts.patch_key_fact(engine, TENANT, memory.memory_id, 7, PatchMemoryRequest(retire=True))

    assert raised.value.errors == [
        {"field": "index", "message": f"out of range 0..{len(memory.fields.key_facts) - 1}"}
    ]


def test_a_stored_fact_has_no_key_facts_and_says_which_route_corrects_it(engine: Engine) -> None:
    created = bank.create(engine, TENANT, CreateMemoryRequest(fact="Mina likes tea.", scope={"user_id": "u"}))

    with pytest.raises(Conflict, match="PATCH /v1/memories/"):
        key_facts.list_key_facts(engine, TENANT, created.name.removeprefix("memories/"))


def test_the_inspector_shows_a_corrected_key_facts_earlier_wording(engine: Engine, memory: Memory) -> None:
    # Given a key fact corrected through the API
    before = memory.fields.key_facts[0]
    key_facts.patch_key_fact(
        engine, TENANT, memory.memory_id, 0, PatchMemoryRequest(fact="Mina: Max is a corgi.")
    )

    # When the inspector lists the thread's memories
    [view] = [
        view
        for view in inspection.memories(engine, TENANT, THREAD).memories
        if view.memory_id == memory.memory_id
    ]

    # Then the memory's view carries the earlier wording with when and why it ended (the page lists it)
    [revision] = view.life.key_fact_revisions
    assert (revision.index, revision.fact, revision.reason) == (0, before, "correct")


def test_a_change_that_landed_meanwhile_is_never_overwritten_but_answered_409(
    engine: Engine, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given another request retiring the key fact between this correction's read and its write
    real = engine.store.update_memory

    def retired_first(changed: Memory, **kwargs: object) -> bool:
        stored = engine.store.get_memory(TENANT, memory.memory_id)
        assert stored is not None
        ended = KeyFactLife(index=0, slot="", invalid_at=stored.created_at, reason="retire")
        real(stored.model_copy(update={"life": stored.life.model_copy(update={"key_facts": [ended]})}))
        return real(changed, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.store, "update_memory", retired_first)

    # When the correction writes / Then it is a 409 and the retirement stands
    with pytest.raises(Conflict, match="changed meanwhile"):
        key_facts.patch_key_fact(engine, TENANT, memory.memory_id, 0, PatchMemoryRequest(fact="x"))
    stored = engine.store.get_memory(TENANT, memory.memory_id)
    assert stored is not None and [fact.reason for fact in stored.life.key_facts] == ["retire"]
    assert stored.life.key_fact_revisions == []


@pytest.mark.parametrize(
    ("said", "answer", "corrected"),
    [
        ("I have a dog named Max, a beagle.", "Cute!", "Mina: Max is a corgi."),
        ("나는 맥스라는 비글을 키워.", "귀엽다!", "Mina: 나는 맥스라는 웰시코기를 키워."),
    ],
    ids=["en", "ko"],
)
def test_a_correction_rewrites_the_summarys_words_that_quoted_the_fact(
    engine: Engine, said: str, answer: str, corrected: str
) -> None:
    # Given a memory whose summary quotes its key fact (the built-in extractor's summary is the
    # batch's own lines)
    memory = say(engine, "s1", said, answer, MARCH)
    before = memory.fields.key_facts[0]
    assert before in memory.fields.summary

    # When the key fact is corrected
    key_facts.patch_key_fact(engine, TENANT, memory.memory_id, 0, PatchMemoryRequest(fact=corrected))

    # Then the summary, and a hit's content, say the corrected words in its place
    stored = engine.store.get_memory(TENANT, memory.memory_id)
    assert stored is not None
    assert corrected in stored.fields.summary and before not in stored.fields.summary
    [hit] = [hit for hit in ask(engine, corrected) if hit.memory_id == memory.memory_id]
    assert corrected in hit.content


@pytest.mark.parametrize(
    ("summary", "old", "new", "expected"),
    [
        (  # the local model's summary of the fact-update set's first session (it paraphrases)
            "Jae and Mina meet at a cafe downtown in Busan. They discuss their lives.",
            "Mina: I live in Busan with my parents, close to Haeundae beach.",
            "Mina: I live in Daegu.",
            "Jae and Mina meet at a cafe downtown in Busan. They discuss their lives. "
            "(Corrected: Mina: I live in Daegu.)",
        ),
        (
            "재현과 미나가 오랜만에 안부를 나눴다. 미나는 부산에 산다.",
            "미나: 나는 부모님이랑 해운대 근처 부산에 살아.",
            "미나: 나는 대구에 살아.",
            "재현과 미나가 오랜만에 안부를 나눴다. 미나는 부산에 산다. (정정: 미나: 나는 대구에 살아.)",
        ),
        (  # the summary quotes the words without the speaker's name
            "Mina said: I live in Busan. Jae works downtown.",
            "Mina: I live in Busan.",
            "Mina: I live in Daegu.",
            "Mina said: I live in Daegu. Jae works downtown.",
        ),
    ],
    ids=["paraphrase-en", "paraphrase-ko", "quoted-words"],
)
def test_the_summary_is_rewritten_where_it_quotes_the_words_and_told_the_correction_where_it_paraphrased(
    summary: str, old: str, new: str, expected: str
) -> None:
    assert key_facts.summary_after(summary, old, new) == expected
