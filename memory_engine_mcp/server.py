"""The MCP server: memory-engine's remember / recall / forget / list as tools of the official MCP SDK,
each one or two calls of the Python client to a memory-engine API (local or on AWS)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from memory_engine_client import ApiError, AsyncMemoryEngine
from memory_engine_mcp import render

T = TypeVar("T")

INSTRUCTIONS = """Long-term memory for this conversation (memory-engine). Korean and English alike.
- remember: a dialogue turn into a memory thread (memories are extracted from turns in the
  background), or one fact under a scope such as {"user_id": "123"}.
- recall: what is remembered about a question, within a token budget, with ids and scores.
- forget: a memory by id, a dialog (its memories go with it), or everything about a chat user.
- list_threads / list_memories: what is stored."""

Thread = Annotated[
    str | None,
    Field(description="The memory thread (parent_session_uuid), e.g. 'user-42'. Give this or scope."),
]
Scope = Annotated[
    dict[str, str] | None,
    Field(
        description='A memory-bank scope (flat dict of strings), e.g. {"user_id": "42"}. Give this or thread.'
    ),
]
DialogUuid = Annotated[
    str | None, Field(description="A dialog to delete with the memories made from it (needs session).")
]
Userid = Annotated[str | None, Field(description="A chat user (UUID v4): forget everything about them.")]
ThreadName = Annotated[
    str, Field(min_length=1, description="A thread, or a scope's thread from list_threads.")
]
WRITES = ToolAnnotations(destructive_hint=False, idempotent_hint=False)
DELETES = ToolAnnotations(destructive_hint=True, idempotent_hint=True)
READS = ToolAnnotations(read_only_hint=True)


def build_server(connect: Callable[[], AsyncMemoryEngine] = AsyncMemoryEngine) -> MCPServer:
    """The server with its tools; `connect` makes the client on first use (inside the server's
    event loop), by default from MEMORY_ENGINE_URL and MEMORY_ENGINE_API_KEY."""
    server = MCPServer("memory-engine", instructions=INSTRUCTIONS)
    clients: list[AsyncMemoryEngine] = []

    def engine() -> AsyncMemoryEngine:
        if not clients:
            clients.append(connect())
        return clients[0]

    @server.tool(structured_output=False, annotations=WRITES)
    async def remember(
        text: Annotated[str, Field(min_length=1, description="The user's message, or the fact.")],
        thread: Thread = None,
        scope: Scope = None,
        answer: Annotated[str, Field(description="The assistant's reply to the message (a turn only).")] = "",
        session: Annotated[
            str | None, Field(description="The session of the turn (default: the thread's name).")
        ] = None,
        speaker: Annotated[str | None, Field(description="The user's name in the turn, e.g. 'Alex'.")] = None,
        language: Annotated[str | None, Field(description="'ko' (default) or 'en', or another code.")] = None,
        extract_now: Annotated[
            bool, Field(description="Extract memories from the thread's buffered turns now (use sparingly).")
        ] = False,
    ) -> str:
        """Remember a dialogue turn in a thread (it becomes part of a memory in the background) or
        store one fact under a scope. Returns what was stored and its id."""
        _one_of(thread=thread, scope=scope)
        if scope is not None:
            fact = await _call(engine().bank_create(text, scope))
            return f"Stored the fact {fact.name} under scope {render.scope(fact.scope)}."
        assert thread is not None
        dialog = f"mcp-{uuid.uuid4().hex[:16]}"
        turn = {"uuid": dialog, "query": text, "answer": answer}
        await _call(
            engine().consolidate(
                session or thread,
                thread,
                turn,
                user_name=speaker,
                language=language,
                force_summary=extract_now or None,
            )
        )
        return (
            f"Remembered the turn as dialog {dialog} in session {session or thread} of thread {thread}. "
            "Memories are extracted in the background (after 20 buffered turns, or now with "
            "extract_now); until then recall finds the turn itself."
        )

    @server.tool(structured_output=False, annotations=READS)
    async def recall(
        query: Annotated[str, Field(min_length=1, description="What to recall, in the user's words.")],
        threads: Annotated[
            list[str] | None, Field(description="The threads to search. Give this or scope.")
        ] = None,
        scope: Scope = None,
        max_tokens: Annotated[
            int | None, Field(ge=1, le=100_000, description="Fit the answer into this many tokens.")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="The most memories to return.")] = 5,
    ) -> str:
        """Recall the memories that matter for a query, best first, each with its id and score
        (threads: the engine's memories and recent turns; scope: the facts stored under it)."""
        _one_of(threads=threads, scope=scope)
        if scope is not None:
            found = await _call(engine().bank_search(scope, query, top_k=limit))
            return render.facts(query, found.retrieved_memories)
        assert threads is not None
        hits = await _call(engine().retrieve(threads, query, limit=limit, max_tokens=max_tokens))
        return render.hits(query, hits)

    @server.tool(structured_output=False, annotations=DELETES)
    async def forget(
        memory_id: Annotated[
            str | None, Field(description="A memory's id (from recall or list_memories), or memories/<id>.")
        ] = None,
        dialog_uuid: DialogUuid = None,
        session: Annotated[str | None, Field(description="The session of dialog_uuid.")] = None,
        userid: Userid = None,
    ) -> str:
        """Forget one memory, one dialog (its memories go too; their other turns are kept and
        extracted again), or everything remembered about a chat user."""
        _one_of(memory_id=memory_id, dialog_uuid=dialog_uuid, userid=userid)
        if userid is not None:
            gone = await _call(engine().forget_user(userid))
            counts = f"{gone.deleted_memories} memories, {gone.deleted_dialogs} dialogs"
            return f"Forgot user {gone.userid}: {counts}."
        if dialog_uuid is not None:
            if session is None:
                raise ToolError("session: give the session of the dialog to forget")
            deleted = await _call(engine().delete(session, dialog_uuid))
            return render.deleted(deleted.data)
        assert memory_id is not None
        removed = await _call(engine().bank_delete(memory_id))
        return f"Forgot {removed.name}."

    @server.tool(structured_output=False, annotations=READS)
    async def list_threads() -> str:
        """The threads with their sessions, and the scopes that hold facts."""
        return render.threads(await _call(engine().list_threads()))

    @server.tool(structured_output=False, annotations=READS)
    async def list_memories(
        thread: ThreadName,
        after: Annotated[str | None, Field(description="The last id of the previous page.")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="The most memories to list.")] = 20,
    ) -> str:
        """A thread's memories in id order, each with its id, session and summary."""
        return render.memories(thread, await _call(engine().list_memories(thread, after=after, limit=limit)))

    return server


def _one_of(**named: object) -> None:
    given = [name for name, value in named.items() if value is not None]
    if len(given) != 1:
        raise ToolError(f"give exactly one of {', '.join(named)} (got {', '.join(given) or 'none'})")


async def _call(pending: Awaitable[T]) -> T:
    """The client's answer, or its error as a tool error the model can read (with the fields)."""
    try:
        return await pending
    except ApiError as error:
        fields = "; ".join(f"{item.field}: {item.message}" for item in error.errors)
        named = f" ({fields})" if fields and fields not in error.message else ""
        raise ToolError(f"{error}{named}") from None
