"""Issue #45 §1 and §3 with the LLM extractor: it is shown the thread's current facts, marks the
one a later statement updates (a fake OpenAI-compatible server answers as a model would), the
replaced fact stays as history, and retrieve returns it after its replacement by default, with
its history on request. English and Korean."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest

pytest.importorskip("openai")

from memory_engine.adapters.openai import LlmExtractor
from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, DeleteRequest, RetrieveRequest
from memory_engine.models.domain import Memory
from memory_engine.usecases import consolidate, delete, retrieve
from tests.fakes.engine import ENGINE_BACKENDS, run_worker
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion
from tests.llm.builders import as_content, memory_answer

TENANT, THREAD = "acme", "thread-llm"
MARCH = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 9, 10, 0, tzinfo=UTC)
CASES = {
    "en": {
        "language": "en",
        "before": ("I live in Busan with my parents.", "Mina lives in Busan with her parents."),
        "after": ("Guess what, I'm in Seoul since last week!", "Mina moved to Seoul."),
        "query": "Where does Mina live now?",
    },
    "ko": {
        "language": "ko",
        "before": ("나 부모님이랑 부산에 살아.", "미나는 부모님과 부산에 산다."),
        "after": ("나 지난주부터 서울이야!", "미나는 서울로 이사했다."),
        "query": "미나는 지금 어디에 살아?",
    },
}


@pytest.fixture
def engine(make_extractor: Callable[..., LlmExtractor]) -> Iterator[Engine]:
    with ENGINE_BACKENDS["local"]() as engine:
        engine.extractor = make_extractor()
        yield engine


def answer(fact: str, status: str = "new", replaces: str | None = None) -> str:
    return as_content(
        memory_answer(
            summary=fact,
            key_facts=[{"turn": 1, "fact": fact, "status": status, "replaces": replaces}],
            characters=[{"name": "Mina", "aliases": []}],
        )
    )


def say(engine: Engine, session: str, text: str, when: datetime, language: str) -> Memory:
    request = ConsolidateRequest.model_validate(
        {
            "session_uuid": session,
            "parent_session_uuid": THREAD,
            "user_name": "Mina",
            "language": language,
            "new_dialog": {"uuid": f"{session}-d1", "query": text, "answer": "", "timestamp": when},
            "options": {"force_summary": True},
        }
    )
    consolidate.run(engine, TENANT, request)
    [memory] = run_worker(engine)
    return memory


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> dict[str, object]:
    return CASES[request.param]


def test_the_model_sees_the_current_facts_and_its_update_replaces_the_named_one(
    engine: Engine, server: FakeOpenAIServer, case: dict[str, object]
) -> None:
    (said_before, fact_before), (said_after, fact_after) = case["before"], case["after"]  # type: ignore[misc]
    language, query = str(case["language"]), str(case["query"])
    # Given a model that states the first fact, then marks the second an update of F1
    server.script(
        (200, chat_completion(answer(fact_before))),
        (200, chat_completion(answer(fact_after, "update", "F1"))),
    )
    old = say(engine, "s1", said_before, MARCH, language)

    # When Mina says where she lives now, in a later session
    new = say(engine, "s2", said_after, MAY, language)

    # Then the second prompt showed the first fact, numbered and quoted with its date
    prompt = server.requests[1]["messages"][1]["content"]
    assert f"F1 (2026-03-02): {json.dumps(fact_before, ensure_ascii=False)}" in prompt
    # And the first memory keeps its fact, marked replaced by the second as of May
    stored = engine.store.get_memory(TENANT, old.memory_id)
    assert stored is not None and stored.fields.key_facts[0] == fact_before
    [life] = stored.life.key_facts
    assert (life.index, life.superseded_by, life.invalid_at, life.reason) == (0, new.memory_id, MAY, "update")

    # And retrieve returns the replacement first, the replaced one after it, not current
    ask = {"parent_session_uuids": [THREAD], "user_input": {"query": query}}
    hits = retrieve.run(engine, TENANT, RetrieveRequest.model_validate(ask)).data
    ids = [hit.memory_id for hit in hits]
    assert ids.index(new.memory_id) < ids.index(old.memory_id)
    assert not next(hit for hit in hits if hit.memory_id == old.memory_id).current

    # And with history the replaced fact is named, with when and by what
    ask["options"] = {"history": True}
    hits = retrieve.run(engine, TENANT, RetrieveRequest.model_validate(ask)).data
    [past] = next(hit for hit in hits if hit.memory_id == old.memory_id).history or []
    assert (past.fact, past.invalid_at, past.superseded_by) == (fact_before, MAY, new.memory_id)


def test_a_reference_to_a_fact_it_was_not_shown_replaces_nothing(
    engine: Engine, server: FakeOpenAIServer
) -> None:
    # Given a model that names F7 when only one current fact was shown (facts of no one-value
    # slot, so only the model's reference could mark one)
    server.script(
        (200, chat_completion(answer("Mina enjoys walks by the sea."))),
        (200, chat_completion(answer("Mina finds the sea too cold now.", "update", "F7"))),
    )
    old = say(engine, "s1", "I enjoy walks by the sea.", MARCH, "en")

    say(engine, "s2", "The sea is too cold for me now!", MAY, "en")

    # Then nothing is marked: no id is invented
    stored = engine.store.get_memory(TENANT, old.memory_id)
    assert stored is not None and stored.life.key_facts == []


def test_a_fact_the_turns_do_not_say_replaces_nothing_though_the_model_marked_it(
    engine: Engine, server: FakeOpenAIServer
) -> None:
    # Given a model that restates the current fact it was shown, marked an update of it, for a
    # batch that never speaks of it (a small model copied its prompt's current facts)
    server.script(
        (200, chat_completion(answer("Mina enjoys walks by the sea."))),
        (200, chat_completion(answer("Mina enjoys walks by the sea.", "update", "F1"))),
    )
    old = say(engine, "s1", "I enjoy walks by the sea.", MARCH, "en")

    new = say(engine, "s2", "Pizza tonight!", MAY, "en")

    # Then grounding dropped that fact, and it replaces nothing
    assert new.fields.key_facts == [] and "replaces_json" not in new.metadata
    stored = engine.store.get_memory(TENANT, old.memory_id)
    assert stored is not None and stored.life.key_facts == []


def test_deleting_the_memory_the_model_said_updates_a_fact_makes_that_fact_hold_again(
    engine: Engine, server: FakeOpenAIServer
) -> None:
    # Given a fact of no one-value slot that the model marked updated by a later memory's
    server.script(
        (200, chat_completion(answer("Mina enjoys walks by the sea."))),
        (200, chat_completion(answer("Mina finds the sea too cold now.", "update", "F1"))),
    )
    old = say(engine, "s1", "I enjoy walks by the sea.", MARCH, "en")
    new = say(engine, "s2", "The sea is too cold for me now!", MAY, "en")
    marked = engine.store.get_memory(TENANT, old.memory_id)
    assert marked is not None and [f.superseded_by for f in marked.life.key_facts] == [new.memory_id]

    # When the later memory is deleted by id
    delete.run(engine, TENANT, DeleteRequest(session_uuid="s2", dialog_uuid=new.memory_id))

    # Then the earlier fact holds again
    stored = engine.store.get_memory(TENANT, old.memory_id)
    assert stored is not None and stored.life.key_facts == []
