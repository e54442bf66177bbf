"""Cutting a batch of turns into speaker-attributed sentences (Korean, English and mixed text)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory_engine.models.domain import Turn

ASSISTANT = "assistant"

# A terminator run, optionally closed by quotes or brackets, then whitespace or the end.
_TERMINATOR = re.compile(r"[.!?…。！？~]+[\"'”’)\]]*(?=\s|$)")
_LAST_WORD = re.compile(r"(?:^|[^A-Za-z])([A-Za-z]+)$")
# Words whose trailing dot does not end a sentence ("Dr. Holt", "Capt. Mira").
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "st", "capt", "col", "gen", "lt", "sgt", "prof", "jr", "sr", "vs", "mt"}
)
_CONTENT = re.compile(r"[0-9A-Za-z가-힣]")
_TERMINAL_END = re.compile(r"[.!?…。！？~][\"'”’)\]]*$")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of the batch: `position` orders sentences, `turn_index` names the turn."""

    position: int
    turn_index: int
    speaker: str
    text: str


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, split at line breaks and at terminators followed by a space.

    Abbreviations such as "Dr." and single initials ("J.") do not end a sentence; text without
    any punctuation (common in chat Korean) stays one sentence per line.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in _TERMINATOR.finditer(line):
            if match.group() == "." and _ends_with_abbreviation(line[start : match.start()]):
                continue
            head = line[start : match.end()]
            sentences.append(head)
            start = match.end()
        sentences.append(line[start:])
    return [s.strip() for s in sentences if _CONTENT.search(s)]


def _ends_with_abbreviation(head: str) -> bool:
    word = _LAST_WORD.search(head)
    if word is None:
        return False
    token = word.group(1)
    return token.lower() in _ABBREVIATIONS or (len(token) == 1 and token.isupper())


def cut_turn(turn: Turn, limit: int) -> tuple[str, str]:
    """The query and answer as extraction sees them: the first `limit` characters of the two together."""
    limit = max(limit, 0)
    query = turn.query[:limit]
    answer = turn.answer[: max(limit - len(query), 0)]
    return query, answer


def speakers_of(turn: Turn, default_user: str) -> tuple[str, str]:
    """Who said the query (the turn's user) and who said the answer (its NPC, else the assistant)."""
    user = turn.user_name.strip() or default_user
    return user, (turn.npc_id or "").strip() or ASSISTANT


def sentences_from_turns(turns: Sequence[Turn], limit: int, default_user: str) -> list[Sentence]:
    """Every sentence of the batch in order, each attributed to its speaker."""
    out: list[Sentence] = []
    for index, turn in enumerate(turns):
        query, answer = cut_turn(turn, limit)
        user, responder = speakers_of(turn, default_user)
        for speaker, text in ((user, query), (responder, answer)):
            for sentence in split_sentences(text):
                out.append(Sentence(len(out), index, speaker, sentence))
    return out


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters at a word boundary, marked with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def as_sentence(text: str) -> str:
    """`text` ending in terminal punctuation, so joined sentences stay countable."""
    return text if _TERMINAL_END.search(text) else text + "."
