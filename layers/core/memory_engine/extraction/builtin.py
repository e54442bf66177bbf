"""The built-in extractor: every memory field picked from the batch's own sentences, no model.

Used when no LLM is configured. Deterministic and pure Python: the same batch always gives the
same memory, in well under 10 ms for a batch of 8 turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memory_engine.errors import InvalidInput
from memory_engine.extraction.characters import resolve_names, strip_title
from memory_engine.extraction.cues import IntentKind, fact_score, intent_kind, is_question
from memory_engine.extraction.keywords import Term, salience, select_keywords, term_weights, terms
from memory_engine.extraction.names import addressee, scan_names
from memory_engine.extraction.scene import find_scene
from memory_engine.extraction.sentences import (
    ASSISTANT,
    Sentence,
    as_sentence,
    clip,
    sentences_from_turns,
    speakers_of,
)
from memory_engine.models.domain import MemoryFields, Turn
from memory_engine.ports import Extraction, ExtractionContext

VERSION = "builtin-1"
METADATA: dict[str, str | int | float] = {"extractor": "builtin", "version": VERSION}
SUMMARY_SENTENCES = 10
MAX_FACTS = 18
MIN_FACTS = 3
QUOTES_PER_CHARACTER = 4
MAX_INTENTS = 3
SENTENCE_CHARS = 300
QUOTE_CHARS = 200
FACT_THRESHOLD = 2


@dataclass
class _Batch:
    """The batch read once: sentences with their terms and scores, and who is who."""

    sentences: list[Sentence]
    terms: list[list[Term]]
    weights: dict[str, float]
    salience: list[float]
    facts: list[int]
    canonical: dict[str, str]  # every speaker and mentioned name → canonical name
    characters: list[str]
    mentioned: list[str]  # canonical names of people mentioned in the text
    places: list[str]
    korean: bool

    def name(self, speaker: str) -> str:
        return self.canonical.get(speaker, speaker)

    def line(self, sentence: Sentence) -> str:
        return f"{self.name(sentence.speaker)}: {as_sentence(clip(sentence.text, SENTENCE_CHARS))}"


class BuiltinExtractor:
    """Extractive extractor: summary, facts, quotes and intent are sentences of the batch itself.

    Sentences are scored by TF-IDF salience over the batch; facts by cues (numbers, dates, names,
    "I am / I went / my ..." and Korean equivalents); intent by wishes, plans, requests and questions.
    Characters are the speakers plus people named in the text, aliases merged with the thread's
    `context.known_characters` (see `memory_engine.extraction.characters`).
    """

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        if not turns:
            raise InvalidInput("Extraction needs at least one turn: the batch given was empty.")
        batch = _read(sorted(turns, key=lambda turn: turn.seq), context)
        keywords = select_keywords(batch.terms, batch.weights, [*batch.mentioned, *batch.places])
        scene = find_scene([s.text for s in batch.sentences], batch.places, [t.timestamp for t in turns])
        fields = MemoryFields(
            summary=_summary(batch),
            keywords=keywords,
            key_facts=_key_facts(batch),
            key_dialogue=_key_dialogue(batch),
            intent=_intent(batch, keywords),
            location=scene.describe(batch.korean),
            characters=batch.characters,
        )
        return Extraction(fields=fields, metadata=dict(METADATA))


def _read(turns: Sequence[Turn], context: ExtractionContext) -> _Batch:
    sentences = sentences_from_turns(turns, context.length_limit, context.user_name)
    speakers: list[str] = []
    for turn in turns:
        user, responder = speakers_of(turn, context.user_name)
        speakers.append(user)
        if turn.answer.strip():
            speakers.append(responder)
    speakers = list(dict.fromkeys(speakers))
    if ASSISTANT in speakers:
        # An answer with no npc_id: the assistant is whoever the user calls by name ("하루야, ..."),
        # else a plain label in the batch's language, never the API's word "assistant" in Korean.
        label = _assistant_name(sentences, speakers) or ("AI" if _is_korean(context) else ASSISTANT)
        sentences = [replace(s, speaker=label) if s.speaker == ASSISTANT else s for s in sentences]
        speakers = list(dict.fromkeys(label if name == ASSISTANT else name for name in speakers))
    known = context.known_characters
    familiar = [*speakers, *known, *(alias for aliases in known.values() for alias in aliases)]
    scan = scan_names((s.text for s in sentences), familiar)
    canonical = resolve_names([*speakers, *scan.persons], known)
    mentioned = list(dict.fromkeys(canonical.get(name, name) for name in scan.persons))
    per_sentence = [terms(s.text) for s in sentences]
    weights = term_weights(per_sentence)
    person_words = [strip_title(name) for name in scan.persons]
    return _Batch(
        sentences=sentences,
        terms=per_sentence,
        weights=weights,
        salience=[salience(sentence_terms, weights) for sentence_terms in per_sentence],
        facts=[fact_score(s.text, any(word in s.text for word in person_words)) for s in sentences],
        canonical=canonical,
        characters=[
            name for name in dict.fromkeys([*(canonical.get(s, s) for s in speakers), *mentioned]) if name
        ],
        mentioned=mentioned,
        places=scan.places,
        korean=_is_korean(context),
    )


def _is_korean(context: ExtractionContext) -> bool:
    return context.language.casefold().startswith("ko")


def _assistant_name(sentences: Sequence[Sentence], speakers: Sequence[str]) -> str | None:
    """The name the user's lines call the assistant by, if any ("하루야,", "Luna,")."""
    others = {name.casefold() for name in speakers if name != ASSISTANT}
    for sentence in sentences:
        if sentence.speaker == ASSISTANT:
            continue
        name = addressee(sentence.text)
        if name and name.casefold() not in others:
            return name
    return None


def _top(indexes: Sequence[int], score: Sequence[float], limit: int, batch: _Batch) -> list[int]:
    """The `limit` best-scoring sentences (distinct texts, earlier wins ties), in chronological order."""
    seen: set[str] = set()
    chosen: list[int] = []
    for i in sorted(indexes, key=lambda i: (-score[i], i)):
        text = batch.sentences[i].text.casefold()
        if text not in seen:
            seen.add(text)
            chosen.append(i)
        if len(chosen) == limit:
            break
    return sorted(chosen)


def _summary(batch: _Batch) -> str:
    everything = range(len(batch.sentences))
    score = [batch.salience[i] + 0.5 * min(batch.facts[i], 4) for i in everything]
    contentful = [i for i in everything if batch.salience[i] > 0]
    chosen = _top(contentful or list(everything), score, SUMMARY_SENTENCES, batch)
    parts: list[str] = []
    previous: Sentence | None = None
    for i in chosen:
        sentence = batch.sentences[i]
        text = as_sentence(clip(sentence.text, SENTENCE_CHARS))
        same_utterance = (
            previous is not None
            and previous.position + 1 == sentence.position
            and (previous.turn_index, previous.speaker) == (sentence.turn_index, sentence.speaker)
        )
        if same_utterance:
            parts[-1] += f" {text}"
        else:
            parts.append(f"{batch.name(sentence.speaker)}: {text}")
        previous = sentence
    return " ".join(parts) or _participants(batch)


def _key_facts(batch: _Batch) -> list[str]:
    everything = range(len(batch.sentences))
    score = [batch.facts[i] + 0.2 * batch.salience[i] for i in everything]
    candidates = [i for i in everything if batch.facts[i] >= FACT_THRESHOLD and batch.terms[i]]
    if len(candidates) < MIN_FACTS:
        # Few sentences carry fact cues (chat Korean rarely does): the most salient statements
        # fill up to MIN_FACTS, after the cued ones.
        statements = [
            i
            for i in everything
            if i not in candidates and batch.salience[i] > 0 and not is_question(batch.sentences[i].text)
        ]
        padding = _top(statements, batch.salience, MIN_FACTS - len(candidates), batch)
        return [batch.line(batch.sentences[i]) for i in sorted([*candidates, *padding])]
    return [batch.line(batch.sentences[i]) for i in _top(candidates, score, MAX_FACTS, batch)]


def _key_dialogue(batch: _Batch) -> list[str]:
    chosen: list[int] = []
    by_speaker: dict[str, list[int]] = {}
    for i, sentence in enumerate(batch.sentences):
        by_speaker.setdefault(batch.name(sentence.speaker), []).append(i)
    for indexes in by_speaker.values():
        contentful = [i for i in indexes if batch.salience[i] > 0]
        chosen.extend(_top(contentful or indexes, batch.salience, QUOTES_PER_CHARACTER, batch))
    return [
        f'{batch.name(batch.sentences[i].speaker)}: "{clip(batch.sentences[i].text, QUOTE_CHARS)}"'
        for i in sorted(chosen)
    ]


def _intent(batch: _Batch, keywords: Sequence[str]) -> str:
    kinds: dict[int, IntentKind] = {}
    for i, sentence in enumerate(batch.sentences):
        kind = intent_kind(sentence.text)
        if kind is not None:
            kinds[i] = kind
    base = {i: (2.0 if kind == "plan" else 1.0) + 0.2 * batch.salience[i] for i, kind in kinds.items()}
    picked: list[int] = []
    per_speaker: dict[str, int] = {}
    seen: set[str] = set()
    while base and len(picked) < MAX_INTENTS:
        # Prefer different speakers: each quote already taken from a speaker costs their next one.
        best = min(base, key=lambda i: (-(base[i] - per_speaker.get(batch.sentences[i].speaker, 0)), i))
        del base[best]
        sentence = batch.sentences[best]
        if sentence.text.casefold() in seen:
            continue
        seen.add(sentence.text.casefold())
        picked.append(best)
        per_speaker[sentence.speaker] = per_speaker.get(sentence.speaker, 0) + 1
    lines = [_intent_line(batch, batch.sentences[i], kinds[i]) for i in sorted(picked)]
    lines.append(_topic(batch, keywords))
    if len(lines) < 2:
        lines.append(_participants(batch))
    return " ".join(lines)


def _intent_line(batch: _Batch, sentence: Sentence, kind: IntentKind) -> str:
    name = batch.name(sentence.speaker)
    quote = as_sentence(clip(sentence.text, QUOTE_CHARS))
    if batch.korean:
        label = "바람이나 계획" if kind == "plan" else "질문"
        return f'{name}의 {label}: "{quote}"'
    verb = "expresses a wish or plan" if kind == "plan" else "wants to know"
    return f'{name} {verb}: "{quote}"'


def _topic(batch: _Batch, keywords: Sequence[str]) -> str:
    # Names say who talks, not about what; a keyword sharing a word with one already taken adds nothing.
    names = [*batch.canonical, *batch.canonical.values()]
    taken = {word.casefold() for name in names for word in name.split()}
    top: list[str] = []
    for keyword in keywords:
        words = {word.casefold() for word in keyword.split()}
        if not words & taken:
            top.append(keyword)
            taken |= words
        if len(top) == 3:
            break
    if not top:
        return "짧은 말을 주고받는 대화이다." if batch.korean else "The characters exchange short remarks."
    if batch.korean:
        return f"대화는 주로 {', '.join(top)}에 관한 내용이다."
    # Sentences end on a plain word, never on a keyword or a name that could look like an initial.
    return f"{_and(top)} {'is' if len(top) == 1 else 'are'} what the conversation is mainly about."


def _participants(batch: _Batch) -> str:
    names = batch.characters or ["assistant"]
    if batch.korean:
        return f"{names[0]}의 이야기이다." if len(names) == 1 else f"{', '.join(names)} 사이의 대화이다."
    return f"{names[0]} is speaking." if len(names) == 1 else f"{_and(names)} are talking."


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
