"""What an extractor answered, checked against the turns it read before it is stored.

A small model credited quotes to the wrong speaker (once the assistant's line to the dog), left the
characters empty, wrote facts the turns do not say and an intent that only restated the summary
(issue #45 §2). Whatever extracted the memory, `ground` keeps only what the batch supports:

- a quote is credited to the speaker whose words hold it (the utterance it is copied from, or the
  one sharing most of its words); a quote no utterance supports is dropped;
- the characters include every speaker, and, when the extractor named nobody, the people and
  pets the turns name (the built-in extractor's, `builtin.detected_characters`);
- a key fact that copies one of the thread's current facts the prompt showed, label and all
  (`F1 (2024-03-03): "…"`, as `prompts.render.format_current_facts` numbers them), is dropped;
  one whose rest is not a fact shown keeps only the rest, and a speaker's line among those is
  credited as a quote is (issue #45: the Korean answers copied them, read as facts of a
  character named "F1 (2024-03-03)");
- a key fact none of whose words the turns contain is dropped (invented, not paraphrased: a
  paraphrase keeps the names and nouns it speaks of);
- a one-value fact a speaker states ("I moved to Seoul") that no key fact states for them is added
  as the speaker's line, so a later statement can replace it (`turn_statements`);
- an intent that says what the summary says (bigram similarity at or above INTENT_RESTATES) is
  left empty.

What was changed is counted in the memory's metadata (`grounding_*`), so a run can say how often.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory_engine.extraction.builtin import detected_characters
from memory_engine.extraction.fact_extractor import normalize, similarity
from memory_engine.extraction.registry import canonical_index, canonical_name
from memory_engine.extraction.sentences import ASSISTANT, speakers_of
from memory_engine.extraction.turn_statements import said_statements, with_said_statements
from memory_engine.models.domain import MemoryFields, Turn
from memory_engine.ports import ExtractionContext
from memory_engine.retrieval.text import tokenize

# An intent this similar to the summary restates it.
INTENT_RESTATES = 0.8
# A quote shares at least this share of its words with the utterance it is credited to.
QUOTE_SUPPORT = 0.6
_QUOTE_MARKS = "\"'“”‘’「」"
_LINE = re.compile(r"^\s*([^:]{1,60}):\s*(.+)$", re.DOTALL)
# The label the prompt gives a current fact it shows (`prompts.render.format_current_facts`).
_SHOWN_LABEL = re.compile(r"^\s*F\d+(?: \(\d{4}-\d{2}-\d{2}\))?:\s*")


@dataclass(frozen=True)
class Utterance:
    speaker: str
    raw: str
    text: str  # normalized (`fact_extractor.normalize`)
    words: frozenset[str]


def utterances(turns: Sequence[Turn], user_name: str) -> list[Utterance]:
    """Each turn's query and answer with who said it."""
    out: list[Utterance] = []
    for turn in turns:
        user, responder = speakers_of(turn, user_name)
        for speaker, text in ((user, turn.query), (responder, turn.answer)):
            if text.strip():
                out.append(Utterance(speaker, text, normalize(text), frozenset(tokenize(text))))
    return out


def ground(
    fields: MemoryFields,
    turns: Sequence[Turn],
    context: ExtractionContext,
    known: Mapping[str, Sequence[str]],
    named_none: bool = False,
) -> tuple[MemoryFields, dict[str, int]]:
    """`fields` with what the turns do not support taken out (see the module's docstring), and
    how many of each change were made. `known`: canonical name → aliases (the thread's registry
    with the batch's); `named_none`: the extractor listed no character at all."""
    said = utterances(turns, context.user_name)
    index = canonical_index({name: list(aliases) for name, aliases in known.items()})
    counts = {"recredited_quotes": 0, "dropped_quotes": 0, "dropped_facts": 0, "added_characters": 0}
    quotes: list[str] = []
    for line in fields.key_dialogue:
        quote = _credited(line, said, index)
        if quote is None:
            counts["dropped_quotes"] += 1
        else:
            counts["recredited_quotes"] += quote != line
            quotes.append(quote)
    words = frozenset().union(*(u.words for u in said)) if said else frozenset()
    shown = {normalize(fact.fact) for fact in context.current_facts}
    speakers = {canonical_name(name, index).casefold() for name in [*fields.characters, *known]}
    speakers.update(canonical_name(u.speaker, index).casefold() for u in said)
    uncopied: list[str] = []
    for fact in fields.key_facts:
        own = _uncopied(fact, shown, said, index, speakers)
        if own is None:
            counts["dropped_copies"] = counts.get("dropped_copies", 0) + 1
        elif own:
            counts["stripped_copies"] = counts.get("stripped_copies", 0) + (own != fact)
            uncopied.append(own)
    facts = [fact for fact in uncopied if _supported(fact, words)]
    counts["dropped_facts"] = len(uncopied) - len(facts)
    detected = detected_characters(turns, context) if named_none else []
    characters = _characters(fields.characters, said, detected, index)
    counts["added_characters"] = len(characters) - len(fields.characters)
    kept = facts
    facts = with_said_statements(kept, characters, said_statements(turns, context.user_name, index))
    counts["added_statements"] = len([fact for fact in facts if fact not in kept])
    intent = (
        ""
        if fields.intent and similarity(fields.intent, fields.summary) >= INTENT_RESTATES
        else fields.intent
    )
    counts["emptied_intent"] = int(intent != fields.intent)
    grounded = fields.model_copy(
        update={"key_dialogue": quotes, "key_facts": facts, "characters": characters, "intent": intent}
    )
    return grounded, {name: count for name, count in counts.items() if count}


def _credited(line: str, said: Sequence[Utterance], index: Mapping[str, str]) -> str | None:
    """The quote line credited to the speaker whose words hold it, or None when no words do."""
    match = _LINE.match(line)
    speaker, quote = (match.group(1).strip(), match.group(2).strip()) if match else ("", line.strip())
    bare = normalize(quote.strip(_QUOTE_MARKS))
    if not bare:
        return None
    holders = [u for u in said if bare in u.text]
    if not holders:
        words = frozenset(tokenize(quote))
        if not words:
            return None
        share = {id(u): len(words & u.words) / len(words) for u in said}
        best = max(said, key=lambda u: share[id(u)], default=None)
        if best is None or share[id(best)] < QUOTE_SUPPORT:
            return None
        holders = [best]
    written = canonical_name(speaker, index) if speaker else ""
    if any(canonical_name(u.speaker, index) == written for u in holders):
        return line
    return f"{canonical_name(holders[0].speaker, index)}: {quote}"


def _uncopied(
    fact: str,
    shown: set[str],
    said: Sequence[Utterance],
    index: Mapping[str, str],
    speakers: set[str],
) -> str | None:
    """`fact` as it is when it carries no current-fact label; else None when it copies a fact
    shown (or is a speaker's line no utterance holds), "" when nothing is left of it, or the
    rest without the label(s) and the quotes around it, a speaker's line credited as a quote."""
    rest = fact
    while (label := _SHOWN_LABEL.match(rest)) is not None:
        rest = rest[label.end() :].strip().strip(_QUOTE_MARKS).strip()
    if rest == fact:
        return fact
    if not rest:
        return ""
    if normalize(rest) in shown:
        return None
    line = _LINE.match(rest)
    if line and canonical_name(line.group(1).strip(), index).casefold() in speakers:
        return _credited(rest, said, index)
    return rest


def _supported(fact: str, words: frozenset[str]) -> bool:
    """A fact sharing at least one word with the turns (a fact with no words at all is kept)."""
    own = set(tokenize(fact))
    return not own or bool(own & words)


def _characters(
    named: Sequence[str], said: Sequence[Utterance], detected: Sequence[str], index: Mapping[str, str]
) -> list[str]:
    """The extractor's characters, every speaker among them, and the built-in detection's
    (`detected`: given when the extractor named nobody)."""
    out = list(dict.fromkeys(named))
    seen = {canonical_name(name, index).casefold() for name in out}
    # The unnamed assistant is a label, not a character (`llm_extractor.speakers`).
    speakers = list(dict.fromkeys(u.speaker for u in said if u.speaker != ASSISTANT))
    for speaker in speakers:
        if canonical_name(speaker, index).casefold() not in seen:
            out.append(canonical_name(speaker, index))
            seen.add(out[-1].casefold())
    for person in detected:
        name = canonical_name(person, index)
        if name != ASSISTANT and name.casefold() not in seen:
            out.append(name)
            seen.add(name.casefold())
    return out
