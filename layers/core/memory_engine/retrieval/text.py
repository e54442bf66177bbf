"""Lexical analysis shared by BM25, the buffered-turn scorer and the benchmarks.

One analyzer for every lexical path, so a word indexed one way is always queried the same way.
Pure Python on purpose: the core ships without numpy or PyStemmer (the stemmer is snowballstemmer's).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

from memory_engine.retrieval import korean

__all__ = ["STOP_WORDS", "mostly_korean", "stem", "tokenize"]

# A small English list: function words and pronouns that match everywhere and carry no topic.
# Question words are in it because retrieval queries are mostly questions.
_STOP_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves
    s t d ll m re ve im ive id youre youve youll hes shes its thats theres theyre weve were wont dont
    doesnt didnt isnt arent wasnt werent cant couldnt wouldnt shouldnt hasnt havent hadnt lets
    also yeah oh ok okay really
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())

# Syllables, plus jamo for "ㅋㅋ"-style runs (NFKC turns compatibility jamo into conjoining ones).
_HANGUL = "\uac00-\ud7a3\u1100-\u11ff\u3131-\u318e"
# Groups: a Hangul run | a run of other letters/digits (apostrophes inside: "don't",
# "Caroline's"), with the Hangul run glued to its end if any ("AI가", "2023년에").
_WORD = re.compile(rf"([{_HANGUL}]+)|([^\W_{_HANGUL}]+(?:['’][^\W_{_HANGUL}]+)*)([{_HANGUL}]+)?")
_POSSESSIVE = re.compile(r"['’]s$")

# Trailing particles (josa), longest first so the shortest stem comes last. Stripping only ever adds
# a token (the surface word is kept), so a false strip costs a little noise, never a lost match.
_JOSA_TEXT = """
        은 는 이 가 을 를 에 의 도 만 와 과 로 랑 께 야
        에서 에게 한테 께서 으로 이랑 까지 부터 처럼 보다 하고 이나 이며 이고 에는 에도 로는 로도
        라고 라는 이는 이가 이를 이의 이도 이와 이야 이란 이라 와는 과는 에서는 에게는 한테는
        으로는 으로도 에서도 이라고 이라는 에게서 한테서 께서는 이한테 이에게 이처럼 이보다 까지는 부터는
"""
_JOSA: tuple[str, ...] = tuple(sorted(set(_JOSA_TEXT.split()), key=lambda josa: (-len(josa), josa)))
_JOSA_SET = frozenset(_JOSA)


def mostly_korean(text: str) -> bool:
    """Whether at least half of the words of `text` are Hangul ("지훈이 Netflix 봤어?" is;
    "Did Jihoon watch 기생충?" is not). Numbers do not count; "AI가" counts as a Latin word."""
    found = _WORD.findall(unicodedata.normalize("NFKC", text))
    korean = sum(1 for hangul, _, _ in found if hangul)
    other = sum(1 for _, word, _ in found if word and not word.isdigit())
    return korean > 0 and korean >= other


def tokenize(text: str) -> list[str]:
    """Analyze `text` into index terms, in order.

    English: lower-cased words, stop words removed, Porter-stemmed ("running" → "run").
    Korean: each Hangul run gives the word, the word without its trailing particle ("미라가" →
    "미라") and its character bigrams, so partial and inflected forms still meet. Digits are kept.
    """
    terms: list[str] = []
    for piece in _pieces(text):
        for hangul, word, glued in _WORD.findall(unicodedata.normalize("NFKC", piece).lower()):
            if hangul:
                terms.extend(_korean_terms(hangul))
                continue
            term = _word_term(word)
            if term:
                terms.append(term)
            # A bare particle glued to a Latin word or number ("AI가") is grammar, not a term.
            if glued and glued not in _JOSA_SET:
                terms.extend(_korean_terms(glued))
    return terms


# A long text is analysed a piece at a time, so that no one call (normalising, lower-casing, finding
# the words) holds the interpreter for long: a memory document's whole text in one `findall` held it
# 41-51 ms in the local server (docs/research/speed.md).
_PIECE_CHARS = 8192
_SPACE = re.compile(r"\s")


def _pieces(text: str) -> list[str]:
    """`text` cut just before a whitespace character about every `_PIECE_CHARS` characters. No
    word, normal form or case rule reaches across whitespace, so the pieces' terms are the
    whole text's; a stretch without whitespace stays whole."""
    if len(text) <= _PIECE_CHARS:
        return [text]
    pieces, start = [], 0
    while len(text) - start > _PIECE_CHARS:
        space = _SPACE.search(text, start + _PIECE_CHARS)
        if space is None:
            break
        pieces.append(text[start : space.start()])
        start = space.start()
    pieces.append(text[start:])
    return pieces


@lru_cache(maxsize=65536)
def _word_term(word: str) -> str | None:
    """The index term of one non-Hangul word, or None for a stop word."""
    if "'" in word or "’" in word:
        word = _POSSESSIVE.sub("", word).replace("'", "").replace("’", "")
    if not word or word in STOP_WORDS:
        return None
    return stem(word) if word.isalpha() else word


def _korean_terms(word: str) -> tuple[str, ...]:
    """Korean morphology where it is installed (retrieval/korean.py), else the light analyzer."""
    analysed = korean.morphemes(word)
    if analysed is None:
        return _hangul_terms(word)
    # A particle the dictionary took for a word ("지훈이가" → 지훈 + 이가) is still grammar.
    return korean.merge(tuple(m for m in analysed if m not in _JOSA_SET), _stripped(word))


@lru_cache(maxsize=8192)
def _hangul_terms(word: str) -> tuple[str, ...]:
    # Unique per word: a 2-syllable word is its own bigram, and must not count twice.
    out = dict.fromkeys(_stripped(word))
    for i in range(len(word) - 1):
        out[word[i : i + 2]] = None
    return tuple(out)


@lru_cache(maxsize=8192)
def _stripped(word: str) -> tuple[str, ...]:
    """The word, then every reading of it without a trailing particle. Every reading, not only
    the longest: "고양이를" must give "고양이" (+ 를) as well as the "고양" that "이를" would leave,
    since without a dictionary we cannot tell which is right."""
    out = dict.fromkeys([word])
    for josa in _JOSA:
        if len(word) > len(josa) and word.endswith(josa):
            out[word[: -len(josa)]] = None
    return tuple(out)


_STEMMERS = threading.local()  # a snowball stemmer keeps state while it works: one per thread


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of one lower-case word ("ponies" → "poni", "hopping" → "hop"), by the
    `snowballstemmer` package's Porter algorithm (pure Python). Words of one or two letters stay
    as they are ("us" is not "u")."""
    if len(word) <= 2:
        return word
    stemmer = getattr(_STEMMERS, "porter", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _STEMMERS.porter = snowballstemmer.stemmer("porter")
    return str(stemmer.stemWord(word))
