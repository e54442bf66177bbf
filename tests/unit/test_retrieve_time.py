"""Issue #45 §3: retrieve knows time. A fact replaced later comes after its replacement by
default and shows its history on request; `as_of` answers what was true then; `since`/`until`
keep to event time; each hit says when it was stated and whether it still holds. English and
Korean, both store backends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from memory_engine.engine import Engine
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.api import ConsolidateRequest, RetrievedMemory, RetrieveRequest
from memory_engine.usecases import consolidate, retrieve
from tests.fakes.engine import ENGINE_BACKENDS
from tests.unit.test_thread_fact_life import MARCH, MAY, TENANT, THREAD, say

APRIL = datetime(2026, 4, 15, tzinfo=UTC)
CASES = {
    "en": ("I live in Busan with my parents.", "I moved to Seoul last week.", "Where does Mina live now?"),
    "ko": ("나는 부산에 살아.", "지난주에 서울로 이사했어.", "미나는 지금 어디에 살아?"),
}


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        engine.extractor = BuiltinExtractor()
        yield engine


def ask(engine: Engine, query: str, **options: object) -> list[RetrievedMemory]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": [THREAD], "user_input": {"query": query}, "options": options}
    )
    return retrieve.run(engine, TENANT, request).data


@pytest.fixture(params=sorted(CASES))
def moved(request: pytest.FixtureRequest, engine: Engine) -> tuple[str, str, str]:
    before, after, query = CASES[request.param]
    old = say(engine, "s1", before, "Good to know.", MARCH)
    new = say(engine, "s2", after, "Congratulations!", MAY)
    return old.memory_id, new.memory_id, query


def test_the_replacing_fact_comes_first_and_the_replaced_one_after_it_not_current(
    engine: Engine, moved: tuple[str, str, str]
) -> None:
    old, new, query = moved

    hits = ask(engine, query)

    ids = [hit.memory_id for hit in hits]
    assert ids.index(new) < ids.index(old)
    by_id = {hit.memory_id: hit for hit in hits}
    assert by_id[new].current and not by_id[old].current
    assert (by_id[old].stated_at, by_id[new].stated_at) == (MARCH, MAY)
    assert by_id[old].history is None  # history only on request


def test_history_on_request_names_the_replaced_fact_when_and_by_what(
    engine: Engine, moved: tuple[str, str, str]
) -> None:
    old, new, query = moved

    hits = {hit.memory_id: hit for hit in ask(engine, query, history=True)}

    [past] = hits[old].history or []
    assert (past.valid_from, past.invalid_at, past.superseded_by) == (MARCH, MAY, new)
    assert past.fact.startswith("Mina: ")
    assert hits[new].history == []


def test_as_of_answers_what_was_true_then(engine: Engine, moved: tuple[str, str, str]) -> None:
    old, _, query = moved

    hits = ask(engine, query, as_of=APRIL.isoformat())

    assert [hit.memory_id for hit in hits] == [old]
    assert hits[0].current


def test_since_and_until_keep_to_event_time(engine: Engine, moved: tuple[str, str, str]) -> None:
    old, new, query = moved

    assert [hit.memory_id for hit in ask(engine, query, since=APRIL.isoformat())] == [new]
    assert [hit.memory_id for hit in ask(engine, query, until=APRIL.isoformat())] == [old]


def test_a_question_about_something_else_leaves_the_order_alone(
    engine: Engine, moved: tuple[str, str, str]
) -> None:
    old, _, _ = moved

    hits = ask(engine, "parents")

    assert all(hit.current for hit in hits)
    assert old in [hit.memory_id for hit in hits]


def test_a_window_that_ends_before_it_starts_is_a_4xx_naming_both_fields() -> None:
    with pytest.raises(ValidationError, match=r"options.since must not be after options.until"):
        RetrieveRequest.model_validate(
            {
                "parent_session_uuids": [THREAD],
                "user_input": {"query": "q"},
                "options": {"since": MAY.isoformat(), "until": MARCH.isoformat()},
            }
        )


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_turn_still_in_the_buffer_replaces_an_extracted_fact(engine: Engine, language: str) -> None:
    # Given Mina's March statement extracted, and her May one consolidated but still buffered
    before, after, query = CASES[language]
    old = say(engine, "s1", before, "Good to know.", MARCH)
    buffered = ConsolidateRequest.model_validate(
        {
            "session_uuid": "s2",
            "parent_session_uuid": THREAD,
            "user_name": "Mina",
            "new_dialog": {"uuid": "s2-d1", "query": after, "answer": "", "timestamp": MAY},
        }
    )
    consolidate.run(engine, TENANT, buffered)

    # When she asks where she lives
    hits = ask(engine, query)

    # Then the buffered turn comes first, and the March memory after it, not current
    ids = [hit.memory_id for hit in hits]
    assert ids.index("s2-d1") < ids.index(old.memory_id)
    assert not next(hit for hit in hits if hit.memory_id == old.memory_id).current


def test_a_replacement_the_caller_already_has_is_not_added_back(
    engine: Engine, moved: tuple[str, str, str]
) -> None:
    old, new, query = moved
    # Given a caller whose prompt already holds the May dialog (the replacing memory's only turn)
    stored = engine.store.get_memory(TENANT, new)
    assert stored is not None

    # When it asks, naming that dialog as recent
    hits = ask_with(engine, query, recent_dialogs=stored.source_dialog_uuids)

    # Then the replacing memory is not returned again, and the March one says it no longer holds
    assert new not in [hit.memory_id for hit in hits]
    assert not next(hit for hit in hits if hit.memory_id == old).current


def ask_with(engine: Engine, query: str, **fields: object) -> list[RetrievedMemory]:
    body = {"parent_session_uuids": [THREAD], "user_input": {"query": query}, **fields}
    return retrieve.run(engine, TENANT, RetrieveRequest.model_validate(body)).data
