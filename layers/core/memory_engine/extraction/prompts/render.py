"""Turns, context and a prompt set in; chat messages out. Pure, so the benchmark counts the very
prompt the extractor sends."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC
from typing import Any, Literal

from memory_engine.extraction.prompts import prompt_for
from memory_engine.extraction.prompts.base import PromptSet
from memory_engine.extraction.prompts.frame import quoted
from memory_engine.models.domain import Turn
from memory_engine.ports import CurrentFact, ExtractionContext

# How the answer's schema reaches the server (adapters/openai/modes.py): only plain JSON mode needs
# it told in the prompt.
StructuredOutput = Literal["json_schema", "json_object_schema", "json_object"]
Message = dict[str, str]

ELLIPSIS = "…"


def cut_turn(turn: Turn, length_limit: int) -> tuple[str, str]:
    """Query and answer cut so that together they hold at most `length_limit` characters
    (docs/api.md `options.length_limit`); the stored turn stays whole, only the prompt is cut."""
    limit = max(length_limit, 0)
    query = turn.query[:limit]
    answer = turn.answer[: max(limit - len(query), 0)]
    if len(query) < len(turn.query):
        query += ELLIPSIS
    if len(answer) < len(turn.answer):
        answer += ELLIPSIS
    return query, answer


def format_turns(turns: Sequence[Turn], length_limit: int) -> str:
    """One numbered line per turn: its time, then each speaker's name and words as JSON strings
    (`"지수": "..." | "assistant": "..."`), neutralised for the prompt's `<dialogue>` frame. The
    speakers are the request's (`user_name`, `npc_id`); a line break or a quote mark in a text is
    escaped inside its string, so no text can forge another turn or speaker line. The time is
    written only when it changes, because a batch usually shares one moment and every repeated
    timestamp costs prompt tokens; it says its zone, UTC (the store keeps instants in UTC, not
    the offset they were sent with), so the model does not take it for local time."""
    lines: list[str] = []
    last_time = ""
    for number, turn in enumerate(turns, start=1):
        query, answer = cut_turn(turn, length_limit)
        moment = turn.timestamp if turn.timestamp.tzinfo else turn.timestamp.replace(tzinfo=UTC)
        when = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        head = f"[{number}] ({when}) " if when != last_time else f"[{number}] "
        last_time = when
        line = f"{head}{quoted(turn.user_name)}: {quoted(query)}"
        if turn.answer:
            line += f" | {quoted(turn.npc_id or 'assistant')}: {quoted(answer)}"
        lines.append(line)
    return "\n".join(lines)


def format_known_characters(known: Mapping[str, Sequence[str]], prompt: PromptSet) -> str:
    """One line per character, its names quoted: a model wrote them from the users' words."""
    if not known:
        return prompt.no_known_characters
    return "\n".join(
        f"- {quoted(name)}: {', '.join(map(quoted, aliases))}" if aliases else f"- {quoted(name)}"
        for name, aliases in known.items()
    )


def format_current_facts(facts: Sequence[CurrentFact], prompt: PromptSet) -> str:
    """The thread's current facts numbered F1, F2, ... (the numbers `schema.replaced_facts` maps
    back), each quoted with the date it was said: one line each, so a fact cannot forge another."""
    if not facts:
        return prompt.no_current_facts
    return "\n".join(
        f"F{number} ({fact.stated_at:%Y-%m-%d}): {quoted(fact.fact)}"
        if fact.stated_at
        else f"F{number}: {quoted(fact.fact)}"
        for number, fact in enumerate(facts, start=1)
    )


def compact_schema(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"))


def _system(
    prompt: PromptSet, template: str, schema: Mapping[str, Any], mode: StructuredOutput, **fields: str
) -> str:
    text = template.format(language_rule=prompt.language_rule.format(language=prompt.language_name), **fields)
    if mode == "json_object":
        # JSON mode only promises syntax; the shape has to be told.
        text += "\n" + prompt.schema_hint.format(schema=compact_schema(schema))
    return text


def memory_messages(
    turns: Sequence[Turn],
    context: ExtractionContext,
    schema: Mapping[str, Any],
    mode: StructuredOutput = "json_schema",
) -> tuple[list[Message], PromptSet]:
    """The chat messages of one batch's extraction and the prompt set they came from. Nothing of
    the request reaches the system message: the user's name is the first line of the dialogue
    frame, quoted like the turns."""
    prompt = prompt_for(context.language)
    system = _system(prompt, prompt.memory_system, schema, mode)
    user = prompt.memory_user.format(
        known_characters=format_known_characters(context.known_characters, prompt),
        turns=format_turns(turns, context.length_limit),
        user_name=quoted(context.user_name),
        current_facts=format_current_facts(context.current_facts, prompt),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}], prompt


def facts_messages(
    messages: Sequence[str],
    existing_facts: Sequence[str],
    language: str,
    schema: Mapping[str, Any],
    mode: StructuredOutput = "json_schema",
) -> tuple[list[Message], PromptSet]:
    """Short-fact extraction: existing facts are numbered 0, 1, ... in the given order; the caller
    maps the numbers back to ids, so the model never sees (nor invents) a real id. Each message
    and fact is one JSON string, so a line break in one cannot forge another."""
    prompt = prompt_for(language)
    system = _system(prompt, prompt.facts_system, schema, mode)
    existing = "\n".join(f"{index}: {quoted(fact)}" for index, fact in enumerate(existing_facts))
    user = prompt.facts_user.format(
        existing=existing or prompt.no_existing_facts,
        messages="\n".join(f"- {quoted(message)}" for message in messages),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}], prompt
