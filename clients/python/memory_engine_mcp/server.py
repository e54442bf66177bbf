"""The MCP server: remember / recall / list / get / forget as tools of the official MCP SDK, each a
call or two of the Python client to a memory-engine API (local or on AWS), for the one user the
server was started for (memory_engine_mcp.identity)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from memory_engine_client import ApiError, AsyncMemoryEngine, NotFound
from memory_engine_client.models import SessionResponse
from memory_engine_mcp import render
from memory_engine_mcp.identity import Identity
from memory_engine_mcp.strict import make_strict

T = TypeVar("T")

# A memory hit is ~600 characters: a recall without a budget would fill the model's context.
DEFAULT_MAX_TOKENS = 1_000
MEMORY_ID = re.compile(r"^(memories/)?\d{8}_\d{6}_[0-9a-f]{6}$")
# What forget_all deletes at most in one call (each turn or fact is one request).
FORGET_ALL_LIMIT = 5_000

INSTRUCTIONS = """Long-term memory of this user (memory-engine), kept across conversations, in Korean,
English and other languages. It is already bound to {target}: never name a thread or user.
When to recall: before you answer anything that may depend on what the user told you before (their
preferences, people and pets, plans, past events, earlier decisions, how they like things done),
call recall with the question in the user's own words. Trust what it returns over your guesses, and
mind that older memories may be out of date.
When to remember: when the user tells you something worth keeping about themselves or their world
(a preference, a fact, a plan, a decision, a correction of something remembered), call remember
with their message as text and your reply as answer, once per such turn. Do not store greetings,
small talk, secrets such as passwords, or what you only inferred.
Memories are extracted in the background; until then recall finds the turn itself.
extraction_status says whether it has run. list_memories shows what is kept, get_memory one item,
forget one memory or turn, forget_all everything of this user (only when they ask for it)."""

WRITES = ToolAnnotations(destructive_hint=False, idempotent_hint=False)
DELETES = ToolAnnotations(destructive_hint=True, idempotent_hint=True)
READS = ToolAnnotations(read_only_hint=True)
Limit = Annotated[int, Field(ge=1, le=50, description="The most memories to return.")]


def build_server(
    identity: Identity, connect: Callable[[], AsyncMemoryEngine] = AsyncMemoryEngine
) -> MCPServer:
    """The server with its tools for `identity`; `connect` makes the client on first use (inside
    the server's event loop), by default from MEMORY_ENGINE_URL and MEMORY_ENGINE_API_KEY."""
    server = MCPServer("memory-engine", instructions=INSTRUCTIONS.format(target=identity.describe()))
    clients: list[AsyncMemoryEngine] = []
    scope = dict(identity.scope) if identity.scope is not None else None
    thread, session = identity.thread, identity.session_uuid

    def engine() -> AsyncMemoryEngine:
        if not clients:
            clients.append(connect())
        return clients[0]

    @server.tool(structured_output=False, annotations=WRITES)
    async def remember(
        text: Annotated[
            str, Field(min_length=1, description="The user's message (or, with a scope, the fact).")
        ],
        answer: Annotated[str, Field(description="Your reply to that message.")] = "",
        extract_now: Annotated[
            bool, Field(description="Extract memories from the buffered turns now (use sparingly).")
        ] = False,
    ) -> str:
        """Remember a turn of the conversation (the user's message and your reply); memories are
        extracted from the turns in the background. Returns the stored turn's id."""
        if scope is not None:
            fact = await _call(engine().bank_create(text, scope))
            return f"Stored the fact {fact.name} under {identity.describe()}."
        language = identity.language_of(text)
        dialog = f"mcp-{uuid.uuid4().hex[:16]}"
        outcome = await _call(
            engine().consolidate(
                session,
                thread,
                {"uuid": dialog, "query": text, "answer": answer},
                user_name=identity.speaker_for(language),
                language=language,
                force_summary=extract_now or None,
            )
        )
        return render.remembered(dialog, session, thread, outcome)

    @server.tool(structured_output=False, annotations=READS)
    async def recall(
        query: Annotated[str, Field(min_length=1, description="What to recall, in the user's words.")],
        max_tokens: Annotated[
            int, Field(ge=50, le=100_000, description="Fit the answer into about this many tokens.")
        ] = DEFAULT_MAX_TOKENS,
        limit: Limit = 5,
    ) -> str:
        """The memories that matter for a query, best first, each with its id and score: extracted
        memories and recent turns not yet extracted."""
        if scope is not None:
            found = await _call(engine().bank_search(scope, query, top_k=limit))
            return render.facts(query, found.retrieved_memories, max_tokens)
        hits = await _call(engine().retrieve(thread, query, limit=limit, max_tokens=max_tokens))
        return render.hits(query, hits)

    @server.tool(structured_output=False, annotations=READS)
    async def list_memories(
        limit: Annotated[int, Field(ge=1, le=500, description="The most items to list.")] = 50,
    ) -> str:
        """Everything kept for this user: the extracted memories and the turns still waiting for
        extraction (both of which recall searches), with their ids."""
        if scope is not None:
            facts = await _call(engine().bank_list(scope, page_size=limit))
            return render.fact_list(identity.describe(), facts)
        memories = await _call(engine().list_memories(thread, limit=limit))
        turns = await _session(engine(), session)
        return render.memories(identity.describe(), memories, turns, limit)

    @server.tool(structured_output=False, annotations=READS)
    async def get_memory(
        memory_id: Annotated[
            str, Field(min_length=1, description="An id from recall or list_memories (memory or turn).")
        ],
    ) -> str:
        """One memory (every field) or one remembered turn, by its id."""
        if MEMORY_ID.match(memory_id):
            return render.one_memory(await _call(engine().bank_get(memory_id)))
        turns = await _session(engine(), session)
        found = [turn for turn in turns.turns if turn.dialog_uuid == memory_id] if turns else []
        if not found:
            raise ToolError(f"memory_id: nothing called {memory_id!r} is kept for {identity.describe()}")
        return render.one_turn(found[0])

    @server.tool(structured_output=False, annotations=DELETES)
    async def forget(
        memory_id: Annotated[
            str, Field(min_length=1, description="A memory's or a turn's id, from recall or list_memories.")
        ],
    ) -> str:
        """Forget one memory, or one turn (with the memories made from it; their other turns are
        kept and extracted again)."""
        if MEMORY_ID.match(memory_id) or scope is not None:
            removed = await _call(engine().bank_delete(memory_id))
            return f"Forgot {removed.name}."
        deleted = await _call(engine().delete(session, memory_id))
        return render.deleted(deleted.data)

    @server.tool(structured_output=False, annotations=DELETES)
    async def forget_all(
        confirm: Annotated[bool, Field(description="true: the user asked to forget everything.")],
    ) -> str:
        """Forget everything kept for this user: every turn and memory of the thread (or every fact
        of the scope). Only when the user asks for it."""
        if not confirm:
            raise ToolError("confirm: send true to forget everything (only when the user asked for it)")
        if scope is not None:
            facts = await _call(engine().bank_list_all(scope))
            for fact in facts[:FORGET_ALL_LIMIT]:
                await _gone(engine().bank_delete(fact.name))
            return f"Forgot {min(len(facts), FORGET_ALL_LIMIT)} facts of {identity.describe()}."
        threads = await _call(engine().list_threads())
        sessions = [s.session_uuid for t in threads.threads if t.thread == thread for s in t.sessions]
        turns = memories = 0
        for name in sessions:
            shown = await _session(engine(), name)
            for turn in shown.turns if shown else []:
                if turns >= FORGET_ALL_LIMIT:
                    break
                outcome = await _gone(engine().delete(name, turn.dialog_uuid))
                turns += 1
                memories += len(outcome.data.deleted_memories) if outcome else 0
        left = await _call(engine().list_memories(thread, limit=500))
        for memory in left.memories:  # memories whose turns had gone before
            await _gone(engine().bank_delete(memory.memory_id))
            memories += 1
        return f"Forgot {turns} turns and {memories} memories of {identity.describe()}."

    @server.tool(structured_output=False, annotations=READS)
    async def extraction_status() -> str:
        """Whether the remembered turns have been extracted into memories yet: how many wait, how
        many were extracted, and the extraction jobs queued."""
        if scope is not None:
            return f"Facts under {identity.describe()} are stored and searchable at once: nothing to extract."
        shown = await _session(engine(), session)
        queue = await _call(engine().show_queue())
        return render.status(session, thread, shown, queue)

    make_strict(server)
    return server


async def _session(engine: AsyncMemoryEngine, session: str) -> SessionResponse | None:
    """The session's turns and memories; None before its first turn."""
    try:
        return await _call_raw(engine.show_session(session))
    except NotFound:
        return None


async def _gone(pending: Awaitable[T]) -> T | None:
    """A delete that may find its target gone already (a cascade took it): None then."""
    try:
        return await _call_raw(pending)
    except NotFound:
        return None


async def _call_raw(pending: Awaitable[T]) -> T:
    try:
        return await pending
    except NotFound:
        raise
    except (ApiError, ValueError) as error:
        raise _tool_error(error) from None


async def _call(pending: Awaitable[T]) -> T:
    """The client's answer, or its error as a tool error the model can read (with the fields): an
    API refusal, or a request the client refused before sending (a ValueError)."""
    try:
        return await pending
    except (ApiError, ValueError) as error:
        raise _tool_error(error) from None


def _tool_error(error: Exception) -> ToolError:
    if isinstance(error, ApiError):
        fields = "; ".join(f"{item.field}: {item.message}" for item in error.errors)
        named = f" ({fields})" if fields and fields not in error.message else ""
        return ToolError(f"{error}{named}")
    return ToolError(str(error) or type(error).__name__)
