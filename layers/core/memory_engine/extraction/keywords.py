"""Content terms of a sentence (English and Korean) and the batch's most salient keywords."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory_engine.extraction.lexicon import (
    EN_IRREGULAR_PAST,
    EN_SMALL_TALK,
    EN_STOP_WORDS,
    KO_AFTER_CONSONANT,
    KO_AFTER_VOWEL,
    KO_COPULA_ENDINGS,
    KO_PARTICLE_EXCEPTIONS,
    KO_PARTICLES,
    KO_SHORT_NOUNS,
    KO_STOP_WORDS,
    KO_VAGUE_NOUNS,
    KO_VERBAL_ENDINGS,
    KO_WEAK_PARTICLES,
)
from memory_engine.models.domain import MAX_KEYWORDS
from memory_engine.retrieval import korean

# A number keeps its suffix ("14th", "3rd", "6kg"), so no fragment ("th") becomes a word.
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]|\d+(?:[.:,]\d+)*[A-Za-z]*|[가-힣]+")
_HANGUL = re.compile(r"[가-힣]")
_HANGUL_BASE = 0xAC00
_RIEUL = 8  # index of ㄹ among final consonants
_PAST_FINALS = frozenset({18, 20})
_PARTICLE_SET = frozenset(KO_PARTICLES)  # a particle on its own, left over after a Latin word
_NOUN_TAGS = frozenset({"NNG", "NNP", "SL", "SH", "XR"})
_NOT_NOUN_TAGS = frozenset({"VV", "VA", "VX", "MAG", "MAJ", "MM", "IC", "XSV", "XSA"})
_ENDING_TAGS = frozenset({"EP", "EF", "EC", "ETM"})
_FUTURE_ENDINGS = frozenset(
    "게래까"
)  # after an ㄹ-final syllable: 할게, 갈래, 볼까  # ㅄ (없-) and ㅆ (했-, 갔-, 있-): only verbs carry them


@dataclass(frozen=True, slots=True)
class Term:
    """A content word: `key` identifies it, `surface` is how it was written (particle removed)."""

    key: str
    surface: str
    index: int  # the word's position in its sentence, so adjacency can be told
    proper: bool  # written with a capital where a sentence does not force one


def final_consonant(syllable: str) -> int:
    """Index of the syllable's final consonant (batchim), 0 when it ends in a vowel or is not Hangul."""
    code = ord(syllable) - _HANGUL_BASE
    return code % 28 if 0 <= code < 11172 else 0


@lru_cache(maxsize=16384)
def strip_particle(word: str) -> str:
    """`word` without its Korean particle (josa), using batchim to avoid cutting nouns like 사과.

    A plural 들 before the particle goes too ("친구들이" → "친구"). Words in the exception list
    (고양이, 아이, ...) are returned whole.
    """
    for whole in KO_PARTICLE_EXCEPTIONS:
        if word == whole or (word.startswith(whole) and word[len(whole) :] in KO_PARTICLES):
            return whole
    for particle in KO_PARTICLES:
        if len(word) <= len(particle) or not word.endswith(particle):
            continue
        stem = word[: -len(particle)]
        final = final_consonant(stem[-1])
        if particle in KO_WEAK_PARTICLES and len(stem) < 2:
            continue
        if particle in KO_AFTER_CONSONANT and not final:
            continue
        if particle in KO_AFTER_VOWEL and final and not (particle == "로" and final == _RIEUL):
            continue
        word = stem
        break
    if len(word) >= 3 and word.endswith("들"):
        word = word[:-1]
    return word


@lru_cache(maxsize=16384)
def is_verbal(word: str) -> bool:
    """True for conjugated Korean verbs and adjectives (갔어, 먹었는데, 좋아요): not keyword material."""
    if any(final_consonant(ch) in _PAST_FINALS for ch in word):
        return True
    if len(word) >= 2 and word[-1] in _FUTURE_ENDINGS and final_consonant(word[-2]) == _RIEUL:
        return True
    return word.endswith(KO_VERBAL_ENDINGS)


@lru_cache(maxsize=32768)
def content_word(word: str) -> tuple[str, str] | None:
    """(key, surface) of a content word; None for stop words, verb forms and one-letter words.
    What sentence salience counts (summary, facts); keywords take `keyword_word`."""
    if _HANGUL.match(word):
        if word in KO_STOP_WORDS or word in _PARTICLE_SET or is_verbal(word):
            return None
        stem = strip_particle(word)
        # Where lindera is installed, a name the dictionary knows loses its familiar 이.
        noun = korean.person(word)
        if noun and stem == noun + "이":
            stem = noun  # "지훈이" is 지훈 called familiarly
        if stem in KO_STOP_WORDS or (len(stem) < 2 and stem not in KO_SHORT_NOUNS):
            return None
        return stem, stem
    if word[0].isdigit():
        return word, word
    word = word.replace("’", "'")
    if word.lower().endswith("'s"):
        word = word[:-2]
    word = word.rstrip("'-")
    key = word.lower()
    if len(key) < 2 or key in EN_STOP_WORDS:
        return None
    return key, word


@lru_cache(maxsize=32768)
def keyword_word(word: str) -> tuple[str, str] | None:
    """(key, surface) of a keyword in its base form: Korean, the noun without its particle or
    copula ("비글이라니" → "비글"); English, a content word that is no small talk ("fine", "glad")
    nor a past form ("ate", "adopted") (`terms` puts common nouns in the singular)."""
    if _HANGUL.match(word):
        found = _korean_noun(word)
        return None if found is None or found[0] in KO_VAGUE_NOUNS else found
    found = content_word(word)
    if found is None or word[0].isdigit():
        return found
    key = found[0]
    if key in EN_SMALL_TALK or key in EN_IRREGULAR_PAST or _past_form(key):
        return None
    return found


def _past_form(key: str) -> bool:
    # "adopted", "played": a verb's past, weaker than any noun; "need", "speed", "bed" are not.
    return len(key) >= 5 and key.endswith("ed") and not key.endswith("eed")


def _singular(key: str) -> str:
    """A plural common noun's singular ("dogs" → "dog", "puppies" → "puppy", "glasses" → "glass")."""
    if len(key) < 4 or not key.endswith("s") or key.endswith(("ss", "us", "is", "ous", "ics")):
        return key
    if key.endswith("ies") and len(key) > 4:
        return key[:-3] + "y"
    if key.endswith(("ches", "shes", "xes", "sses", "zes")):
        return key[:-2]
    return key[:-1]


def _korean_noun(word: str) -> tuple[str, str] | None:
    if word in KO_STOP_WORDS or word in _PARTICLE_SET or is_verbal(word):
        return None
    stem = strip_particle(word)
    for ending in KO_COPULA_ENDINGS:
        if stem == word and len(word) > len(ending) and word.endswith(ending):
            stem = word[: -len(ending)]
            break
    # Where lindera is installed, a name the dictionary knows loses its familiar 이 ("지훈이" is
    # 지훈 called familiarly), a word it reads as a verb, adjective or adverb is no keyword, and a
    # noun keeps only its nouns ("다이어트용으로" → "다이어트").
    noun = korean.person(word)
    if noun and stem == noun + "이":
        stem = noun
    analysis = korean.analysis(word)
    if analysis and stem not in KO_PARTICLE_EXCEPTIONS:
        tags = [tag for _, tag, _ in analysis]
        surface, first, _ = analysis[0]
        predicate = any(tag in _ENDING_TAGS for tag in tags) or tags[-1] in _NOT_NOUN_TAGS
        if predicate or (first in _NOT_NOUN_TAGS and (len(surface) >= 2 or len(word) <= 3)):
            return None
        if any(tag == "XSN" and part == "적" for part, tag, _ in analysis):
            return None  # "규칙적인": an adjective made from a noun
        run = ""
        for part, tag, _ in analysis:
            if not (tag in _NOUN_TAGS or (run and tag == "XSN" and part == "님")) or (
                run and part[0] == "이"
            ):
                break
            run += part
        if run and len(run) < len(stem) and stem.startswith(run):
            stem = run
    if stem in KO_STOP_WORDS or (len(stem) < 2 and stem not in KO_SHORT_NOUNS):
        return None
    return stem, stem


def terms(text: str, keywords: bool = False) -> list[Term]:
    """The content words of one sentence, stop words, particles and verb forms removed; with
    `keywords`, in their base form (`keyword_word`, English common nouns in the singular)."""
    out: list[Term] = []
    for index, word in enumerate(_WORD.findall(text)):
        found = keyword_word(word) if keywords else content_word(word)
        if found is None:
            continue
        key, surface = found
        # A capital where a sentence does not force one (or an acronym) marks a name.
        proper = surface[0].isupper() and (index > 0 or (surface.isupper() and len(surface) > 1))
        if keywords and surface.isascii() and not proper:
            key = surface = _singular(key)
        out.append(Term(key, surface, index, proper))
    return out


def term_weights(
    per_sentence: Sequence[Sequence[Term]], counts: Sequence[float] | None = None
) -> dict[str, float]:
    """TF-IDF over the batch's sentences: frequent terms count more, terms everywhere a bit less.
    `counts` weighs each sentence's occurrences (1 each by default)."""
    count = max(len(per_sentence), 1)
    factors = counts if counts is not None else [1.0] * len(per_sentence)
    tf: dict[str, float] = {}
    for sentence, factor in zip(per_sentence, factors, strict=True):
        for term in sentence:
            tf[term.key] = tf.get(term.key, 0.0) + factor
    df: Counter[str] = Counter(key for sentence in per_sentence for key in {term.key for term in sentence})
    return {key: tf[key] * math.log(1.0 + count / df[key]) for key in tf}


def salience(sentence: Sequence[Term], weights: dict[str, float]) -> float:
    """How much of the batch's vocabulary a sentence carries, damped so long sentences don't always win."""
    keys = {term.key for term in sentence}
    if not keys:
        return 0.0
    return sum(weights.get(key, 0.0) for key in keys) / math.sqrt(max(len(keys), 4))


def select_keywords(
    per_sentence: Sequence[Sequence[Term]],
    weights: dict[str, float],
    phrases: Iterable[str] = (),
    limit: int = MAX_KEYWORDS,
) -> list[str]:
    """Up to `limit` distinct keywords, most salient first.

    Candidates are content words (numbers excluded), English word pairs that recur side by side
    ("support group"), and `phrases` (names and places found in the text), a phrase scoring the
    sum of its words' weights.
    """
    display: dict[str, str] = {}  # key -> capitalised surface, for names
    first_seen: dict[str, int] = {}
    order = 0
    pairs: Counter[tuple[str, str]] = Counter()
    for sentence in per_sentence:
        previous: Term | None = None
        for term in sentence:
            if term.key not in first_seen:
                first_seen[term.key] = order
                order += 1
            if term.proper:
                display.setdefault(term.key, term.surface)
            if (
                previous is not None
                and previous.index + 1 == term.index
                and previous.key.isascii()
                and term.key.isascii()
                and not previous.key[0].isdigit()
                and not term.key[0].isdigit()
            ):
                pairs[(previous.key, term.key)] += 1
            previous = term

    scored: dict[str, tuple[float, int, str]] = {}

    def offer(label: str, score: float, seen: int) -> None:
        key = label.casefold()
        if key not in scored or scored[key][0] < score:
            scored[key] = (score, seen, label)

    for key, weight in weights.items():
        if key[0].isdigit():
            continue
        offer(display.get(key, key), weight, first_seen.get(key, order))
    for (left, right), times in pairs.items():
        if times >= 2:
            seen = min(first_seen[left], first_seen[right])
            offer(
                f"{display.get(left, left)} {display.get(right, right)}", weights[left] + weights[right], seen
            )
    for phrase in phrases:
        words = [word.casefold() for word in phrase.split()]
        known = [word for word in words if word in weights]
        score = sum(weights[word] for word in known) + 1.0
        seen = min((first_seen[word] for word in known), default=order)
        offer(phrase, score, seen)

    # Inflected English verbs ("watched", "planning") are weaker keywords than nouns.
    for key, (score, seen, label) in list(scored.items()):
        if " " not in key and key.isascii() and len(key) >= 5 and key.endswith(("ed", "ing")):
            scored[key] = (score * 0.6, seen, label)
    ranked = sorted(scored.values(), key=lambda item: (-item[0], item[1], item[2]))
    return [label for _, _, label in ranked[:limit]]
