"""The official `openai` client against the local server, whose upstream is a local stub."""

from __future__ import annotations

import http.client
import json
import uuid
from typing import Any

import pytest

from memory_engine.models.chat import chat_user_id
from memory_engine_client import NotFound
from tests.e2e.conftest import API_KEY, LocalServer, wait_on_work
from tests.e2e.dialects.conftest import CHAT_MODEL, database_rows
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion

pytestmark = pytest.mark.e2e
openai = pytest.importorskip("openai")


def client(server: LocalServer) -> Any:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=API_KEY, max_retries=0, timeout=30)


def user_facts(server: LocalServer, userid: str) -> list[str]:
    return [memory.fact for memory in server.client().bank_list_all({"userid": userid})]


def memory_message(request: dict[str, Any]) -> dict[str, Any]:
    """The message that carries the memory block (the one before the latest user message)."""
    return dict(request["messages"][-2])


def test_a_completion_comes_back_through_the_openai_client(
    server: LocalServer, upstream: FakeOpenAIServer
) -> None:
    userid = str(uuid.uuid4())
    upstream.script((200, chat_completion("Hello there!", model=CHAT_MODEL)))

    completion = client(server).chat.completions.create(
        model=CHAT_MODEL, messages=[{"role": "user", "content": "Hi!"}], extra_body={"userid": userid}
    )

    assert completion.choices[0].message.content == "Hello there!"
    assert completion.model == CHAT_MODEL
    assert "userid" not in upstream.requests[-1]


def test_a_streamed_completion_arrives_chunk_by_chunk(
    server: LocalServer, upstream: FakeOpenAIServer
) -> None:
    userid = str(uuid.uuid4())
    upstream.script((200, chat_completion("Streams are neat indeed.")))

    chunks = list(
        client(server).chat.completions.create(
            model=CHAT_MODEL,
            messages=[{"role": "user", "content": "Tell me about streams."}],
            stream=True,
            extra_body={"userid": userid},
        )
    )

    assert len(chunks) > 3
    assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices) == (
        "Streams are neat indeed."
    )


def test_the_local_server_streams_with_chunked_transfer(
    server: LocalServer, upstream: FakeOpenAIServer
) -> None:
    upstream.script((200, chat_completion("one two")))
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    body = {"messages": [{"role": "user", "content": "count"}], "stream": True}

    connection.request(
        "POST", "/v1/chat/completions", json.dumps(body), {"Authorization": f"Bearer {API_KEY}"}
    )
    response = connection.getresponse()

    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert response.read().decode().endswith("data: [DONE]\n\n")
    connection.close()


@pytest.mark.parametrize("stream", [False, True])
def test_a_fact_told_in_one_conversation_is_in_a_later_memory_message(
    server: LocalServer, upstream: FakeOpenAIServer, stream: bool
) -> None:
    # Given a user who told a fact in one conversation, recorded by the worker
    userid = str(uuid.uuid4())
    fact = "My sister Ana lives in Porto and teaches chemistry."
    upstream.script((200, chat_completion("How interesting!")), (200, chat_completion("She lives in Porto.")))
    api = client(server)
    first = api.chat.completions.create(
        model=CHAT_MODEL,
        messages=[{"role": "user", "content": fact}],
        stream=stream,
        extra_body={"userid": userid},
    )
    if stream:
        list(first)  # a stream is recorded once it was read to the end
    wait_on_work(server, lambda: user_facts(server, userid))
    # When a new conversation asks about it
    api.chat.completions.create(
        model=CHAT_MODEL,
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Where does Ana live?"},
        ],
        extra_body={"userid": userid},
    )
    # Then the upstream got the fact in a message of its own before the question, the caller's
    # own instructions as sent
    sent = upstream.requests[-1]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    memory = memory_message(sent)
    assert memory["role"] == "user" and fact in memory["content"]


@pytest.mark.parametrize("userid", ["not-a-uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", ""])
def test_a_userid_the_service_cannot_use_is_a_422_that_leaves_no_trace(
    server: LocalServer, upstream: FakeOpenAIServer, userid: str
) -> None:
    # Given a server with nothing left to do
    wait_on_work(server, lambda: not database_rows(server).get("queue_messages"))
    before = database_rows(server)
    calls = len(upstream.requests)
    # When a chat comes with a userid that is not a UUID v4
    with pytest.raises(openai.UnprocessableEntityError) as refused:
        client(server).chat.completions.create(
            model=CHAT_MODEL,
            messages=[{"role": "user", "content": "My secret code is 4711."}],
            extra_body={"userid": userid},
        )
    # Then the answer names userid, the upstream was not called, and nothing was written or queued
    assert "userid" in str(refused.value)
    assert len(upstream.requests) == calls
    assert database_rows(server) == before


def test_openais_user_field_remembers_through_the_openai_client(
    server: LocalServer, upstream: FakeOpenAIServer
) -> None:
    # Given a fact told through the official client with only OpenAI's own `user`
    upstream.script((200, chat_completion("Noted.")), (200, chat_completion("Porto.")))
    client(server).chat.completions.create(
        model=CHAT_MODEL,
        user="front-end-user-17",
        messages=[{"role": "user", "content": "My sister Ana lives in Porto."}],
    )
    wait_on_work(server, lambda: user_facts(server, chat_user_id("front-end-user-17")))
    # When the same user asks later
    client(server).chat.completions.create(
        model=CHAT_MODEL,
        user="front-end-user-17",
        messages=[{"role": "user", "content": "Where does Ana live?"}],
    )
    # Then the upstream got the fact in the memory message
    assert "Porto" in memory_message(upstream.requests[-1])["content"]


def test_deleting_a_user_forgets_everything_about_them(
    server: LocalServer, upstream: FakeOpenAIServer
) -> None:
    userid = str(uuid.uuid4())
    upstream.script((200, chat_completion("Got it.")))
    client(server).chat.completions.create(
        model=CHAT_MODEL,
        messages=[{"role": "user", "content": "I am allergic to peanuts and shellfish."}],
        extra_body={"userid": userid},
    )
    wait_on_work(server, lambda: user_facts(server, userid))

    forgotten = server.client().forget_user(userid)

    assert forgotten.deleted_memories >= 1 and forgotten.deleted_dialogs == 1
    assert user_facts(server, userid) == []
    with pytest.raises(NotFound):
        server.client().game_memory(f"chat:{userid}")
