"""Extraction with an LLM: one structured-output call per batch of turns, in the memory's language,
with characters named canonically across the thread. Also the short-fact extraction behind
/v1/memories:generate and chat memory.

Importing this module does not import `openai`; `chat_client()` does (the extractor is built over
the chat client it returns).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memory_engine.adapters.openai.errors import LlmUnavailable
from memory_engine.errors import InvalidInput
from memory_engine.extraction.fact_extractor import FactExtraction, FactOperation, normalize
from memory_engine.extraction.grounding import ground
from memory_engine.extraction.prompts.base import PromptSet
from memory_engine.extraction.prompts.render import facts_messages, memory_messages
from memory_engine.extraction.registry import update_registry
from memory_engine.extraction.schema import (
    FactOperationsOut,
    MemoryOut,
    characters_json,
    replaced_facts,
    strict_json_schema,
    to_memory_fields,
)
from memory_engine.models.domain import Turn
from memory_engine.ports import Extraction, ExtractionContext

if TYPE_CHECKING:
    from memory_engine.adapters.openai.client import ChatClient, RepairTexts, Usage

MEMORY_SCHEMA_NAME = "memory"
# The thread's current facts shown with each batch: the newest ones, a bounded prompt.
CURRENT_FACTS_SHOWN = 30
FACTS_SCHEMA_NAME = "fact_operations"


def _repair_texts(prompt: PromptSet) -> RepairTexts:
    from memory_engine.adapters.openai.client import RepairTexts

    return RepairTexts(invalid=prompt.repair, truncated=prompt.truncated)


def chat_client() -> type[ChatClient]:
    """The chat client class, imported now: the core must import without the `llm` extra, and
    building an LLM extractor without it says what to install."""
    try:
        from memory_engine.adapters.openai.client import ChatClient
    except ModuleNotFoundError as exc:
        if exc.name != "openai":
            raise
        raise LlmUnavailable(
            "The LLM extractor needs the openai package: pip install 'memory-engine-server[llm]', "
            "or unset MEMORY_ENGINE_EXTRACTOR to use the built-in extractor."
        ) from exc
    return ChatClient


class LlmExtractor:
    """Extractor (and FactExtractor) over any OpenAI-compatible chat-completions endpoint.

        The chat client's `structured_output` says how the schema reaches the server
        (`adapters/openai/modes.py`): `"json_schema"`, a strict response format (OpenAI, vLLM, Ollama,
        llama.cpp's llama-server); `"json_object_schema"`, JSON mode carrying the schema
        (llama-cpp-python); `"json_object"`, JSON mode only, the schema told in the system prompt. A
        server that refuses a mode moves the client to the next. Each extraction's metadata records
        `model`, `prompt_version`, `structured_output` (the mode answered in), `prompt_tokens`,
        `completion_tokens` (every request's, failed and abandoned ones too), `tokens_estimated` (1 when
    the server did not report some request's tokens and they were estimated), `attempts` (chat
    requests made, repairs and retries included) and
        `characters_json`: the batch's characters as a JSON object
        canonical name → aliases, to merge into the thread's registry with
        `memory_engine.extraction.registry.update_registry`; and `replaces_json` when a key fact
        updates or contradicts one of the thread's current facts it was shown (`ReadsCurrentFacts`).
    """

    def __init__(self, chat: ChatClient) -> None:
        # The chat client's options (endpoint, model, timeouts, retries) are declared once, on the
        # client: build it with `chat_client()(...)`.
        self._chat = chat

    @property
    def model(self) -> str:
        return self._chat.model

    def prompt_messages(self, turns: Sequence[Turn], context: ExtractionContext) -> list[dict[str, str]]:
        """The chat messages `extract` sends for this batch (for inspection and token estimates)."""
        messages, _ = memory_messages(
            turns, context, strict_json_schema(MemoryOut), self._chat.structured_output
        )
        return messages

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        """One memory from one batch. Raises LlmUnavailable / LlmBadOutput (both `Unavailable`) when
        no valid answer comes back, so the batch is retried and never stored empty."""
        if not turns:
            raise InvalidInput("Extraction needs at least one turn: the batch given was empty.")
        schema = strict_json_schema(MemoryOut)
        _, prompt = memory_messages(turns, context, schema, self._chat.structured_output)
        out, usage = self._chat.structured(
            lambda mode: memory_messages(turns, context, schema, mode)[0],
            MemoryOut,
            MEMORY_SCHEMA_NAME,
            _repair_texts(prompt),
        )
        fields, characters = to_memory_fields(out, context.known_characters, len(turns), speakers(turns))
        # What the turns do not support is not stored (quotes, characters, facts, intent).
        registry = update_registry(context.known_characters, characters)
        named_none = not any(character.name or character.aliases for character in out.characters)
        fields, changes = ground(fields, turns, context, registry, named_none)
        metadata = _usage_metadata(usage, prompt)
        metadata.update({f"grounding_{name}": count for name, count in changes.items()})
        metadata["characters_json"] = characters_json(characters)
        replaced = replaced_facts(
            out, len(turns), [fact.id for fact in context.current_facts], fields.key_facts
        )
        if replaced:
            metadata["replaces_json"] = json.dumps(replaced, ensure_ascii=False, sort_keys=True)
        return Extraction(fields=fields, metadata=metadata)

    def current_facts_wanted(self) -> int:
        """Shown the thread's newest current facts (`ReadsCurrentFacts`), to mark what the batch
        updates or contradicts."""
        return CURRENT_FACTS_SHOWN

    def extract_facts(
        self, messages: Sequence[str], existing: Sequence[tuple[str, str]], language: str = "ko"
    ) -> FactExtraction:
        """Fact operations for the user's `messages` against the scope's `(id, fact)` pairs, and
        what the call's requests cost (`spent`, as a memory's metadata counts it; a failed call's
        error carries it too, as `spent`).

        The model sees existing facts numbered 0, 1, ...; numbers map back to the real ids here and
        operations naming a number that was not shown are dropped, so no id is ever invented.
        """
        if not any(message.strip() for message in messages):
            return FactExtraction(operations=[])
        facts = [fact for _, fact in existing]
        schema = strict_json_schema(FactOperationsOut)
        _, prompt = facts_messages(messages, facts, language, schema, self._chat.structured_output)
        out, usage = self._chat.structured(
            lambda mode: facts_messages(messages, facts, language, schema, mode)[0],
            FactOperationsOut,
            FACTS_SCHEMA_NAME,
            _repair_texts(prompt),
        )
        return FactExtraction(operations=map_fact_operations(out, existing), spent=_spent(usage))


def map_fact_operations(out: FactOperationsOut, existing: Sequence[tuple[str, str]]) -> list[FactOperation]:
    """The model's numbered operations as operations on real ids: unknown numbers dropped, one
    operation per existing fact (the first), an "add" that repeats an existing fact turned into
    "keep", repeated adds dropped."""
    by_number = {str(number): pair for number, pair in enumerate(existing)}
    known_text = {normalize(fact): fact_id for fact_id, fact in existing}
    touched: set[str] = set()
    added: set[str] = set()
    operations: list[FactOperation] = []
    for op in out.operations:
        if op.op == "add":
            key = normalize(op.fact)
            if not key or key in added:
                continue
            if key in known_text:
                fact_id = known_text[key]
                if fact_id not in touched:
                    touched.add(fact_id)
                    operations.append(FactOperation(op="keep", id=fact_id, fact=dict(existing)[fact_id]))
                continue
            added.add(key)
            operations.append(FactOperation(op="add", id=None, fact=op.fact))
            continue
        pair = by_number.get((op.id or "").strip())
        if pair is None or pair[0] in touched:
            continue
        fact_id, old_text = pair
        if op.op == "update" and not op.fact:
            continue
        touched.add(fact_id)
        text = op.fact if op.op == "update" else old_text
        operations.append(FactOperation(op=op.op, id=fact_id, fact=text))
    return operations


def speakers(turns: Sequence[Turn]) -> list[str]:
    """Who speaks in the batch, in order: each turn's user and its named NPC (an answer without
    `npc_id` is shown to the model as "assistant", a label rather than a character)."""
    names = [name for turn in turns for name in (turn.user_name, turn.npc_id) if name]
    return list(dict.fromkeys(names))


def _spent(usage: Usage) -> dict[str, str | int | float]:
    """What a call's requests cost, under the names a memory's metadata uses."""
    return {
        "model": usage.model,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "attempts": usage.requests,
        "tokens_estimated": int(usage.estimated),
    }


def _usage_metadata(usage: Usage, prompt: PromptSet) -> dict[str, str | int | float]:
    return {
        "extractor": "llm",
        "model": usage.model,
        "prompt_version": prompt.version,
        "structured_output": usage.mode,
        "language": prompt.language,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "attempts": usage.requests,
        "tokens_estimated": int(usage.estimated),
    }
