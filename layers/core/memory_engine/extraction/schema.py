"""What the LLM answers with (internal output models), their JSON schemas for structured output,
and the bounds of docs/api.md applied after validation.

Parsing is lenient where the meaning is unambiguous, so a near miss costs no repair round trip
(on a small local model a repair costs minutes): a list of strings where objects with one text
field are expected (`key_facts: ["…"]`, `characters: ["Caroline"]`, `key_dialogue: ["Caroline:
hi"]`, fact operations as plain facts to add); the reverse, objects with a single text value where
strings are expected (`keywords: [{"keyword": "dog"}]`); a list of strings where one text is
expected (`intent: ["…", "…"]`, joined); null for a text (empty); one string where a list is
expected (one item); and the whole answer wrapped in one extra key (`{"properties": {…}}`,
`{"memory": {…}}`), as real models answered (tests/llm/recorded/). Anything else that misses the
schema is still an error.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from memory_engine.extraction.registry import (
    Registry,
    canonical_index,
    canonical_name,
    name_key,
    tidy,
    update_registry,
)
from memory_engine.models.domain import MAX_KEY_FACTS, MAX_KEYWORDS, MemoryFields

MAX_QUOTES_PER_CHARACTER = 4
# docs/api.md asks for "about 10 sentences": a little over is tolerated, a runaway summary is cut.
MAX_SUMMARY_SENTENCES = 12
MAX_INTENT_SENTENCES = 4


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


def _only_text(value: Any) -> Any:
    """An object holding exactly one string, where a string is expected: that string."""
    if isinstance(value, dict) and len(value) == 1:
        (only,) = value.values()
        if isinstance(only, str):
            return only
    return value


def _joined(value: Any) -> Any:
    """One text, also when the model gave a list of texts (joined) or null (empty)."""
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return " ".join(item.strip() for item in value if item.strip())
    return _only_text(value)


def _listed(value: Any) -> Any:
    """A list, also when the model gave its one item alone, or null (empty)."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


# A string, also when the model wrapped it in an object of one text field.
Text = Annotated[str, BeforeValidator(_only_text)]
# A free text field: also given as a list of sentences, or null.
Prose = Annotated[str, BeforeValidator(_joined)]
T = TypeVar("T")
Items = Annotated[list[T], BeforeValidator(_listed)]


def _split(value: Any) -> Any:
    """Keywords given as one comma-separated string: one keyword each."""
    if isinstance(value, str):
        return [item for item in re.split(r"[,，、;]", value) if item.strip()]
    return _listed(value)


Keywords = Annotated[list[Text], BeforeValidator(_split)]


def unwrapped(value: Any, required: Iterable[str]) -> Any:
    """The answer itself when the model wrapped it in one key (`{"properties": {...}}`, the
    schema's own word, or `{"memory": {...}}`): an object without the expected fields whose one
    object value has them."""
    if not isinstance(value, dict) or any(key in value for key in required):
        return value
    inner = [item for item in value.values() if isinstance(item, dict)]
    if len(inner) == 1 and any(key in inner[0] for key in required):
        return inner[0]
    return value


class CharacterOut(_Out):
    name: Text
    aliases: Items[Text]

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        return {"name": value, "aliases": []} if isinstance(value, str) else value


def _status(value: Any) -> Any:
    """A fact's status as a model wrote it ("Update", null): unknown words mean a new fact."""
    word = value.strip().casefold() if isinstance(value, str) else ""
    return word if word in ("new", "update", "contradiction") else "new"


def _fact_ref(value: Any) -> Any:
    """The current fact a key fact replaces: "F2", "f2", 2 or "2" all name F2; null or "" none."""
    if value is None or value == "":
        return None
    text = str(value).strip().upper()
    return text if text.startswith("F") else f"F{text}"


FactStatus = Literal["new", "update", "contradiction"]


class FactOut(_Out):
    turn: int
    fact: Prose
    # Prompt versions 5 on: whether the fact is new or replaces one of the thread's current facts
    # shown to the model (F1, F2, ...); earlier versions never write them (new, none).
    status: Annotated[FactStatus, BeforeValidator(_status)] = "new"
    replaces: Annotated[str | None, BeforeValidator(_fact_ref)] = None

    @model_validator(mode="before")
    @classmethod
    def _from_fact(cls, value: Any) -> Any:
        # turn 0: unknown; sorting puts it first, and a stable sort keeps the model's order.
        if isinstance(value, str):
            return {"turn": 0, "fact": value}
        if isinstance(value, dict) and value.get("turn") is None:
            return {**value, "turn": 0}
        return value


class QuoteOut(_Out):
    speaker: Prose
    quote: Prose

    @model_validator(mode="before")
    @classmethod
    def _from_line(cls, value: Any) -> Any:
        """ "Caroline: I'm in" → speaker Caroline; a quote without a "name:" prefix has none."""
        if not isinstance(value, str):
            return value
        speaker, colon, quote = value.partition(":")
        if colon and speaker.strip() and quote.strip() and len(speaker) <= 40:
            return {"speaker": speaker, "quote": quote}
        return {"speaker": "", "quote": value}


class MemoryOut(_Out):
    """The model's answer for one batch. Lists have no length limits here: being over a bound is
    trimmed afterwards (`to_memory_fields`), not a reason to pay for another round trip."""

    summary: Prose = Field(min_length=1)
    keywords: Keywords
    key_facts: Items[FactOut]
    key_dialogue: Items[QuoteOut]
    intent: Prose
    location: Prose
    characters: Items[CharacterOut]

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        return unwrapped(value, ("summary", "keywords", "key_facts", "characters"))


FactOp = Literal["add", "update", "delete", "keep"]


class FactOperationOut(_Out):
    # Models write the number either as "0" or 0; both mean the same fact.
    model_config = ConfigDict(coerce_numbers_to_str=True)

    op: FactOp
    id: str | None
    fact: str

    @model_validator(mode="before")
    @classmethod
    def _from_fact(cls, value: Any) -> Any:
        # A plain string is a new fact: "add" needs no id, and one that repeats a known fact is kept.
        return {"op": "add", "id": None, "fact": value} if isinstance(value, str) else value


class FactOperationsOut(_Out):
    operations: Items[FactOperationOut]

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        return unwrapped(value, ("operations",))


# Keywords a strict json_schema (OpenAI structured outputs and most compatible servers) accepts.
# Descriptions are left out: pydantic fills them from docstrings written for developers, and the
# instructions for the model live in the prompts, in its language.
_KEEP = {"type", "properties", "required", "items", "enum", "anyOf", "const", "additionalProperties"}


@cache
def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the strict subset: every object closed and fully required, refs
    inlined (not every compatible server resolves `$defs`), constraints dropped because pydantic
    validates them anyway. Cached and shared: callers must not modify it."""
    schema = model.model_json_schema()
    defs: dict[str, Any] = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return walk(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]))
        out = {key: walk(value) for key, value in node.items() if key in _KEEP}
        if "properties" in node:
            out["properties"] = {name: walk(sub) for name, sub in node["properties"].items()}
            out["required"] = list(node["properties"])
            out["additionalProperties"] = False
        return out

    return walk(schema)


# A sentence ends at . ! ? followed by a space or the end, or at CJK full stops (no space follows
# those in Chinese and Japanese).
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|[。！？]+")


def first_sentences(text: str, limit: int) -> str:
    """The text up to the end of its `limit`-th sentence; the words themselves are left as written."""
    text = text.strip()
    for number, end in enumerate(_SENTENCE_END.finditer(text), start=1):
        if number == limit:
            return text[: end.end()]
    return text


def _unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def spread(items: Sequence[T], limit: int) -> list[T]:
    """At most `limit` items, evenly spaced and in order: an over-long chronological list is thinned
    over the whole batch rather than losing its end."""
    if len(items) <= limit:
        return list(items)
    if limit <= 1:
        return list(items[:limit])
    step = (len(items) - 1) / (limit - 1)
    return [items[round(index * step)] for index in range(limit)]


def batch_characters(
    out: MemoryOut, known: Mapping[str, Sequence[str]], speakers: Sequence[str] = ()
) -> tuple[Registry, list[str]]:
    """The batch's characters in registry terms: canonical name → the aliases this batch used,
    and the canonical names in order of first mention. The batch's `speakers` are characters
    whatever the model listed (a 1.5B model answered `"characters": []` to a batch of eight
    turns): the turns say who spoke, so adding them invents nothing."""
    found: Registry = {}
    for character in out.characters:
        if character.name or character.aliases:
            found.setdefault(character.name, []).extend(character.aliases)
    named = {name_key(name) for canonical, aliases in found.items() for name in (canonical, *aliases)}
    for speaker in speakers:
        if name_key(speaker) and name_key(speaker) not in named:
            found[tidy(speaker)] = []
            named.add(name_key(speaker))
    index = canonical_index(update_registry(known, found))
    mapped: Registry = {}
    for name, aliases in found.items():
        canonical = canonical_name(name or aliases[0], index)
        names = [tidy(n) for n in (name, *aliases) if tidy(n) and tidy(n) != canonical]
        mapped[canonical] = _unique([*mapped.get(canonical, []), *names])
    return mapped, list(mapped)


def to_memory_fields(
    out: MemoryOut, known: Mapping[str, Sequence[str]], turn_count: int, speakers: Sequence[str] = ()
) -> tuple[MemoryFields, Registry]:
    """Map a validated answer to MemoryFields with every bound of docs/api.md enforced (trim, never fail),
    speakers named canonically and always among the characters; also returns the batch's
    canonical → aliases map."""
    characters_map, characters = batch_characters(out, known, speakers)
    index = canonical_index(update_registry(known, characters_map))
    quotes: list[str] = []
    per_speaker: dict[str, int] = {}
    for quote in out.key_dialogue:
        speaker = canonical_name(quote.speaker, index) if quote.speaker else ""
        if not quote.quote or per_speaker.get(speaker, 0) >= MAX_QUOTES_PER_CHARACTER:
            continue
        per_speaker[speaker] = per_speaker.get(speaker, 0) + 1
        quotes.append(f"{speaker}: {quote.quote}" if speaker else quote.quote)
    fields = MemoryFields(
        summary=first_sentences(out.summary, MAX_SUMMARY_SENTENCES),
        keywords=_unique(out.keywords)[:MAX_KEYWORDS],
        key_facts=[fact.fact for fact in chosen_facts(out, turn_count)],
        key_dialogue=quotes,
        intent=first_sentences(out.intent, MAX_INTENT_SENTENCES),
        location=out.location,
        characters=characters,
    )
    return fields, characters_map


def chosen_facts(out: MemoryOut, turn_count: int) -> list[FactOut]:
    """The answer's key facts as stored: in turn order, thinned to MAX_KEY_FACTS."""
    facts = sorted(
        (fact for fact in out.key_facts if fact.fact),
        key=lambda fact: min(max(fact.turn, 1), max(turn_count, 1)),  # sorted() is stable
    )
    return spread(facts, MAX_KEY_FACTS)


def replaced_facts(
    out: MemoryOut, turn_count: int, current_ids: Sequence[str], stored: Sequence[str] | None = None
) -> dict[str, list[str]]:
    """Which stored key fact (its index, as text) replaces which current fact: key fact index →
    [current fact id, "update" | "contradiction"]. A reference to a fact that was not shown is
    dropped (no id is ever invented); a fact marked "new" replaces nothing. `stored`: the key facts
    as stored, when grounding changed them: a fact it dropped (the turns do not say it; a small
    model restated a current fact it was shown) replaces nothing either."""
    shown = {f"F{number}": fact_id for number, fact_id in enumerate(current_ids, start=1)}
    facts = [fact.fact for fact in chosen_facts(out, turn_count)]
    position = {
        fact: index for index, fact in reversed(list(enumerate(stored if stored is not None else facts)))
    }
    replaced: dict[str, list[str]] = {}
    for fact in chosen_facts(out, turn_count):
        target = shown.get(fact.replaces or "")
        if target is not None and fact.status != "new" and fact.fact in position:
            replaced[str(position[fact.fact])] = [target, fact.status]
    return replaced


def characters_json(characters: Mapping[str, Sequence[str]]) -> str:
    """How the batch's canonical → aliases map travels in Extraction.metadata (values are scalars)."""
    return json.dumps(dict(characters), ensure_ascii=False, sort_keys=True)
