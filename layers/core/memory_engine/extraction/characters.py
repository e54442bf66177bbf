"""Alias merging: every way a character is called maps to one canonical name.

The rule, applied the same way in every batch of a thread:

1. A name already known for the thread (a canonical name or one of its aliases in
   `known`, compared case-insensitively, titles ignored) maps to that known canonical name.
   Known canonical names never change, so memories of one thread stay consistent.
2. Titles ("Captain", "Dr.", "Mrs", ...) are not part of a name: "Captain Holt" is "Holt".
3. A new name joins a character when its words are all words of one of that character's
   names ("Holt" ⊂ "Mira Holt"), or when it contains every word the character is known by
   ("Mira Holt" ⊇ "Mira"). A name that would fit two or more characters ("Mira" with both
   "Mira Holt" and "Mira Stone" around) stays on its own rather than guessing.
4. A new character's canonical name is its longest title-less name (most words, then most
   characters, then first seen): "Captain Mira Holt" / "Mira" / "Holt" → "Mira Holt".
5. A three-syllable Korean name also answers to its given name: "김철수" / "철수" → "김철수".
6. Korean honorifics and the familiar 이 are not part of a name: "지훈 씨", "지훈씨", "민지 님"
   and "지훈이" (이 after a final consonant) are "지훈" and "민지".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memory_engine.extraction.lexicon import TITLES

_HANGUL_WORD = re.compile(r"^[가-힣]{3}$")
# A Korean name with an honorific after it, spaced or not: "지훈 씨", "민지님".
_KO_HONORIFIC = re.compile(r"^([가-힣]{2,4})\s?(?:씨|님|군|양)$")
_HANGUL_BASE = 0xAC00


def strip_title(name: str) -> str:
    """`name` without leading titles ("Captain Mira Holt" → "Mira Holt") and Korean honorifics
    after it ("지훈 씨" → "지훈"); a bare title stays as is."""
    words = name.split()
    while len(words) > 1 and words[0].rstrip(".").casefold() in TITLES:
        words.pop(0)
    core = " ".join(words)
    honorific = _KO_HONORIFIC.match(core)
    return honorific.group(1) if honorific else core


def _familiar_stem(word: str) -> str | None:
    """ "지훈이" → "지훈": the familiar 이 Korean adds to a name ending in a consonant."""
    if len(word) != 3 or not word.endswith("이"):
        return None
    code = ord(word[1]) - _HANGUL_BASE
    return word[:2] if 0 <= code < 11172 and code % 28 else None


def _is_nickname(word: str) -> bool:
    return len(word) >= 3 and word.isascii() and word.isalpha()


def _tokens(core: str) -> frozenset[str]:
    words = {word.casefold() for word in core.split()}
    for word in list(words):
        stem = _familiar_stem(word)
        if stem:
            words.add(stem)
        elif _HANGUL_WORD.match(word):
            words.add(word[1:])  # the given name, without the one-syllable family name
    return frozenset(words)


@dataclass
class _Character:
    fixed: str | None  # a canonical name known from earlier batches
    names: list[str] = field(default_factory=list)  # every surface form, first seen first

    def cores(self) -> list[str]:
        return [strip_title(name) for name in self.names]

    def token_sets(self) -> list[frozenset[str]]:
        return [_tokens(core) for core in self.cores()]

    def all_tokens(self) -> frozenset[str]:
        return frozenset().union(*self.token_sets())

    def canonical(self) -> str:
        if self.fixed is not None:
            return self.fixed
        # "지훈이" is how friends call 지훈: the name itself is the stem.
        cores = [_familiar_stem(core) or core for core in self.cores()]
        best = max(range(len(cores)), key=lambda i: (len(cores[i].split()), len(cores[i]), -i))
        return cores[best]

    def answers_to(self, name: str) -> bool:
        folded, core = name.casefold(), strip_title(name).casefold()
        return any(folded == other.casefold() or core == other.casefold() for other in self.cores()) or any(
            folded == other.casefold() for other in self.names
        )

    def fits(self, tokens: frozenset[str]) -> bool:
        if any(tokens <= own for own in self.token_sets()) or self.all_tokens() <= tokens:
            return True
        if len(tokens) != 1:
            return False
        (word,) = tokens
        return _is_nickname(word) and any(own != word and own.startswith(word) for own in self.all_tokens())


def _build(
    names: Iterable[str], known: Mapping[str, Sequence[str]] | None
) -> tuple[list[_Character], dict[str, int]]:
    characters = [
        _Character(canonical, [canonical, *aliases]) for canonical, aliases in (known or {}).items()
    ]
    placed: dict[str, int] = {}
    pending: list[str] = []
    for name in dict.fromkeys(name.strip() for name in names):
        if not name:
            continue
        match = next((i for i, character in enumerate(characters) if character.answers_to(name)), None)
        if match is None:
            pending.append(name)
        else:
            placed[name] = match
    # Longest names first, so full names exist before the short forms that should join them.
    order = {name: i for i, name in enumerate(pending)}
    pending.sort(key=lambda n: (-len(strip_title(n).split()), -len(strip_title(n)), order[n]))
    for name in pending:
        tokens = _tokens(strip_title(name))
        exact = [i for i, character in enumerate(characters) if character.answers_to(name)]
        candidates = exact or [
            i for i, character in enumerate(characters) if tokens and character.fits(tokens)
        ]
        if len(candidates) == 1:
            characters[candidates[0]].names.append(name)
            placed[name] = candidates[0]
        else:
            characters.append(_Character(None, [name]))
            placed[name] = len(characters) - 1
    return characters, placed


def resolve_names(names: Iterable[str], known: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
    """Each of `names` (as given) mapped to its canonical name, by the rule in this module's docstring."""
    characters, placed = _build(names, known)
    return {name: characters[index].canonical() for name, index in placed.items()}
