"""Chat with memory over fakes: the memory block, pass-through, recording through the queue, forget.

Every test with an engine runs once per store/queue backend (`ENGINE_BACKENDS`): locally and on
DynamoDB/SQS (moto), the worker Lambda handler draining the queue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from memory_engine.engine import Engine
from memory_engine.errors import InvalidInput
from memory_engine.models.chat import ChatCompletionRequest, chat_user_id, memory_userid
from memory_engine.models.domain import scope_key
from memory_engine.models.messages import ChatMemoryJob, ForgetUserJob, chat_session_uuid
from memory_engine.models.statements import StatementRef, ThreadStatements
from memory_engine.usecases import chat, forget_user
from memory_engine.usecases.chat_prompt import (
    MEMORY_HEADER,
    MEMORY_TAG,
    latest_user_texts,
    memory_block,
    with_memory,
)
from tests.fakes.engine import ENGINE_BACKENDS, fake_engine, peek_jobs, run_worker
from tests.fakes.ports import RecordingChat

TENANT = "acme"
USER = "7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47"


@pytest.fixture
def upstream() -> RecordingChat:
    return RecordingChat()


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest, upstream: RecordingChat) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param](chat_model="default-model") as engine:
        engine.chat = upstream
        yield engine


OPENING, CLOSING = f"<{MEMORY_TAG}>", f"</{MEMORY_TAG}>"
FRAME = len(f"\n{OPENING}") + len(f"\n{CLOSING}")  # the markers' lines around the facts


def ask(engine: Engine, text: str, userid: Any = USER, **extra: Any) -> dict[str, Any]:
    body = {"messages": [{"role": "user", "content": text}], "userid": userid, **extra}
    return chat.complete(engine, TENANT, ChatCompletionRequest.model_validate(body))


def memory_message(body: dict[str, Any]) -> str:
    """The content of the message that carries the memory block ("" when none does)."""
    found = [m for m in body["messages"] if str(m.get("content", "")).startswith(MEMORY_HEADER)]
    return str(found[0]["content"]) if found else ""


# -- the prompt --------------------------------------------------------------------------------


def test_only_the_trailing_user_messages_are_new() -> None:
    messages = [
        {"role": "user", "content": "old question"},
        {"role": "assistant", "content": "old answer"},
        {"role": "user", "content": "first new"},
        {"role": "user", "content": [{"type": "text", "text": "second new"}, {"type": "image_url"}]},
    ]

    assert latest_user_texts(messages) == ["first new", "second new"]


def test_the_memory_block_stays_within_its_character_bound() -> None:
    facts = [f"fact number {n} " + "x" * 50 for n in range(20)]

    block = memory_block(facts, max_chars=600)

    assert block.startswith(MEMORY_HEADER) and len(block) <= 600
    assert block.count("\n- ") == (600 - len(MEMORY_HEADER) - FRAME) // len(f'\n- "{facts[0]}"')


def test_a_first_fact_longer_than_the_bound_is_cut_not_dropped() -> None:
    block = memory_block(["y" * 1000], max_chars=len(MEMORY_HEADER) + FRAME + 40)

    assert len(block) == len(MEMORY_HEADER) + FRAME + 40
    assert block.removesuffix(f"\n{CLOSING}").endswith('…"')


def test_no_fact_means_no_block() -> None:
    assert memory_block([], max_chars=2000) == ""


def test_the_block_is_a_user_message_of_its_own_before_the_latest_user_messages() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "old question"},
        {"role": "assistant", "content": "old answer"},
        {"role": "user", "content": "first new"},
        {"role": "user", "content": "second new"},
    ]

    out = with_memory(messages, "BLOCK")

    assert out == [*messages[:3], {"role": "user", "content": "BLOCK"}, *messages[3:]]
    assert messages[0]["content"] == "Be brief."  # the caller's list is not modified


def test_without_a_system_message_the_block_comes_before_the_users_message() -> None:
    out = with_memory([{"role": "user", "content": "hi"}], "BLOCK")

    assert out == [{"role": "user", "content": "BLOCK"}, {"role": "user", "content": "hi"}]


# -- pass-through ------------------------------------------------------------------------------


def test_a_request_without_a_userid_or_user_is_passed_through_untouched(
    engine: Engine, upstream: RecordingChat
) -> None:
    # Given a user fact stored for a valid user (so memory would have something to add)
    ask(engine, "My dog is named Pepper.")
    run_worker(engine)
    upstream.bodies.clear()
    # When a request comes with no userid (null) and no user
    body = {"model": "m", "messages": [{"role": "user", "content": "My dog?"}], "temperature": 0.2}
    answer = chat.complete(engine, TENANT, ChatCompletionRequest.model_validate({**body, "userid": None}))
    # Then the upstream got exactly the request, minus userid, and nothing was queued
    assert upstream.bodies == [body]
    assert answer["choices"][0]["message"]["content"] == "Noted!"
    assert peek_jobs(engine) == []


@pytest.mark.parametrize(
    "userid",
    [
        "not-a-uuid",
        "7f3c2a9e-4b1d-1c8e-9a6f-2d5e8b1c0f47",  # version 1
        "7f3c2a9e4b1d4c8e9a6f2d5e8b1c0f47",  # no hyphens
        "{7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47}",
        "",
        12345,
    ],
)
def test_a_userid_the_service_cannot_use_is_refused_naming_it(userid: Any) -> None:
    # Given a chat request whose userid is not a UUID v4
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "userid": userid}
    # When it is read, Then it is refused, naming userid (never a silent pass-through)
    with pytest.raises(ValidationError) as raised:
        ChatCompletionRequest.model_validate(body)
    assert [error["loc"] for error in raised.value.errors()] == [("userid",)]


@pytest.mark.parametrize("user", [USER, "librechat-65f1c2ab9d", "alex@example.com"])
def test_openais_user_field_names_the_memory_user_when_userid_is_absent(
    engine: Engine, upstream: RecordingChat, user: str
) -> None:
    # Given a fact told in one request that names its user only with OpenAI's `user`
    ask(engine, "My dog is named Pepper.", userid=None, user=user)
    run_worker(engine)
    # When the same user asks later, again with `user` only
    ask(engine, "What is my dog called?", userid=None, user=user)
    # Then the fact came back to them, and `user` went upstream as sent
    sent = upstream.bodies[-1]
    assert "Pepper" in memory_message(sent) and sent["user"] == user


def test_a_user_named_by_openais_user_field_is_forgotten_by_that_string(engine: Engine) -> None:
    # Given a fact remembered for OpenAI's `user` "player-7"
    ask(engine, "My dog is named Pepper.", userid=None, user="player-7")
    run_worker(engine)
    # When that user is forgotten by the same string
    gone = forget_user.run(engine, TENANT, "player-7")
    run_worker(engine)
    # Then their memory is gone
    scope = scope_key({"userid": chat_user_id("player-7")})
    assert gone.deleted_memories >= 1 and engine.store.list_thread_memories(TENANT, scope) == []


def test_uuid_v4_userids_are_recognised_in_any_letter_case() -> None:
    assert memory_userid(USER.upper()) == USER


def test_the_default_model_fills_a_request_that_names_none(engine: Engine, upstream: RecordingChat) -> None:
    ask(engine, "hello", userid=None)

    assert upstream.bodies[0]["model"] == "default-model"


def test_no_model_anywhere_is_a_clear_error_naming_the_field(upstream: RecordingChat) -> None:
    engine = fake_engine()
    engine.chat = upstream

    with pytest.raises(InvalidInput) as raised:
        ask(engine, "hello")

    assert raised.value.errors == [{"field": "model", "message": "is required"}]
    assert upstream.bodies == []


# -- memory ------------------------------------------------------------------------------------


def test_an_answered_exchange_is_queued_for_the_users_memory(engine: Engine) -> None:
    ask(engine, "My dog is named Pepper.")

    [job] = peek_jobs(engine)

    assert isinstance(job, ChatMemoryJob)
    assert (job.userid, job.user_messages, job.answer) == (USER, ["My dog is named Pepper."], "Noted!")


def test_a_fact_told_once_is_in_the_memory_message_of_a_later_conversation(
    engine: Engine, upstream: RecordingChat
) -> None:
    # Given a conversation where the user told a fact, recorded by the worker
    ask(engine, "My dog is named Pepper and he loves the beach.")
    run_worker(engine)
    # When the user asks later, in a new conversation
    ask(engine, "What is my dog called?")
    # Then the upstream gets the fact in the memory message, just before the question
    *_, memory, question = upstream.bodies[-1]["messages"]
    assert memory["role"] == "user" and memory["content"] == memory_message(upstream.bodies[-1])
    assert "My dog is named Pepper and he loves the beach." in memory["content"]
    assert question == {"role": "user", "content": "What is my dog called?"}


def test_the_worker_keeps_the_exchange_as_a_turn_of_the_users_chat_session(engine: Engine) -> None:
    ask(engine, "My dog is named Pepper.")

    run_worker(engine)

    [turn] = engine.store.list_turns(TENANT, chat_session_uuid(USER))
    assert (turn.query, turn.answer) == ("My dog is named Pepper.", "Noted!")
    session = engine.store.get_session(TENANT, chat_session_uuid(USER))
    assert session is not None and session.parent_session_uuid == scope_key({"userid": USER})


def test_a_streamed_answer_is_relayed_as_sse_and_recorded_after_done(engine: Engine) -> None:
    request = ChatCompletionRequest.model_validate(
        {"messages": [{"role": "user", "content": "I live in Lisbon."}], "userid": USER, "stream": True}
    )

    events = list(chat.stream(engine, TENANT, request))

    assert events[-1] == b"data: [DONE]\n\n"
    pieces = [json.loads(event[len(b"data: ") :])["choices"][0]["delta"] for event in events[:-1]]
    assert "".join(piece.get("content", "") for piece in pieces) == "Noted!"
    [job] = peek_jobs(engine)
    assert isinstance(job, ChatMemoryJob) and job.answer == "Noted!"


def test_deleting_a_user_forgets_facts_and_exchanges_and_queues_a_late_purge(engine: Engine) -> None:
    # Given a user with a recorded exchange and fact
    ask(engine, "My dog is named Pepper.")
    run_worker(engine)
    # When the user's memory is deleted
    result = forget_user.run(engine, TENANT, USER)
    # Then facts, turns and index entries are gone, and a purge follows queued exchanges
    assert (result.deleted_memories, result.deleted_dialogs) == (1, 1)
    assert engine.store.list_thread_memories(TENANT, scope_key({"userid": USER})) == []
    assert engine.store.get_session(TENANT, chat_session_uuid(USER)) is None
    assert engine.index.search(TENANT, [scope_key({"userid": USER})], "dog Pepper", [], 10) == []
    assert peek_jobs(engine) == [ForgetUserJob(tenant=TENANT, userid=USER)]


def test_deleting_a_user_forgets_the_names_their_threads_records_keep(engine: Engine) -> None:
    # Given a user whose thread holds a character registry and a statements record (what
    # extraction and supersession keep per thread; both name the user's characters)
    ask(engine, "My dog is named Pepper.")
    run_worker(engine)
    thread = scope_key({"userid": USER})
    engine.store.save_characters(TENANT, thread, {"Mina": ["미나"]})
    stated = StatementRef(
        memory_id="m1", index=0, slot="pet:dog", subject="Mina", stated_at=datetime(2026, 5, 1, tzinfo=UTC)
    )
    assert engine.store.save_statements(ThreadStatements(tenant=TENANT, thread=thread, statements=[stated]))

    # When the user's memory is deleted
    forget_user.run(engine, TENANT, USER)

    # Then neither record is left
    assert engine.store.get_characters(TENANT, thread) == {}
    assert engine.store.get_statements(TENANT, thread) is None


def test_an_exchange_queued_before_the_delete_is_purged_by_the_follow_up(engine: Engine) -> None:
    ask(engine, "My dog is named Pepper.")  # queued, not yet recorded

    forget_user.run(engine, TENANT, USER)
    run_worker(engine)  # the record runs first, then the purge behind it

    assert engine.store.list_thread_memories(TENANT, scope_key({"userid": USER})) == []
    assert engine.store.get_session(TENANT, chat_session_uuid(USER)) is None


def test_deleting_a_uuid_that_is_not_v4_is_refused_naming_the_field(engine: Engine) -> None:
    with pytest.raises(InvalidInput) as raised:
        forget_user.run(engine, TENANT, "7f3c2a9e-4b1d-1c8e-9a6f-2d5e8b1c0f47")

    assert raised.value.errors[0]["field"] == "userid"


@pytest.mark.parametrize(
    ("configured", "said", "language"),
    [
        (None, ["제 강아지 이름은 후추예요."], "ko"),
        (None, ["My dog is Pepper."], "en"),
        ("ja", ["My dog"], "ja"),
    ],
)
def test_facts_are_extracted_in_the_configured_language_or_the_users_script(
    configured: str | None, said: list[str], language: str
) -> None:
    from memory_engine.usecases.facts import fact_language

    assert fact_language(configured, said) == language


def test_a_user_with_no_memory_costs_no_query_embedding(engine: Engine) -> None:
    from tests.fakes.ports import HashEmbedder

    assert isinstance(engine.embedder, HashEmbedder)

    ask(engine, "Hello there, first time here.")

    assert engine.embedder.calls == 0


def test_a_stream_that_breaks_midway_ends_with_an_error_event_and_records_nothing(engine: Engine) -> None:
    from memory_engine.errors import UpstreamFailed

    def breaking(body: dict[str, Any]) -> Any:
        yield json.dumps({"choices": [{"delta": {"content": "Half an"}}]})
        raise UpstreamFailed("The chat model stopped mid-stream (connection reset).")

    engine.chat.stream = breaking  # type: ignore[method-assign]
    request = ChatCompletionRequest.model_validate(
        {"messages": [{"role": "user", "content": "I live in Lisbon."}], "userid": USER, "stream": True}
    )

    events = list(chat.stream(engine, TENANT, request))

    assert len(events) == 2 and b"[DONE]" not in events[-1]
    assert json.loads(events[-1][len(b"data: ") :])["error"]["type"] == "upstream_error"
    assert peek_jobs(engine) == []
