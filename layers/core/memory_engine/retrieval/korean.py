"""Korean morphology for lexical search: ko-dic through Lindera, when it is installed.

`retrieval.text.tokenize` hands every Hangul run here. With the `local` extra installed
(`lindera-python-ko-dic`: Lindera's Rust analyzer with the mecab-ko-dic dictionary embedded, the
dictionary that OpenSearch's nori also uses), a word is cut into morphemes and gives its content
morphemes: nouns (compounds also as their parts), verb and adjective stems as lemmas ("만났어요" →
"만나"), adverbs, roots, numbers and foreign words; particles, endings, suffixes (님, 들) and bound
nouns (씨, 것) are grammar, not terms. Without it (the Lambda core layer stays light) the
light analyzer in `text.py` serves: particle stripping plus character bigrams.

The dictionary loads once per process, on the first Hangul text (about 0.5 s on an idle core).
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from threading import Lock
from typing import Any

__all__ = ["analysis", "analyzer", "merge", "morphemes", "person", "use"]

log = logging.getLogger("memory_engine.retrieval")

# Part-of-speech tags (Sejong, as ko-dic writes them) whose morphemes are index terms.
_CONTENT_TAGS = frozenset({"NNG", "NNP", "NR", "XR", "MAG", "SL", "SH", "SN", "VV", "VA", "UNKNOWN"})
# A predicate's lemma comes from the analysis of an inflected form: "만나/VV/*+았/EP/*".
_PREDICATES = frozenset({"VV", "VA"})

_lock = Lock()
_tokenizer: Any = None
_choice: str | None = None  # "lindera" | "light", decided on first use (or by `use`)


def use(name: str | None) -> None:
    """Choose the analyzer: "lindera", "light", or None to decide again from what is installed
    (the environment variable MEMORY_ENGINE_KOREAN_ANALYZER=light forces the light one)."""
    global _choice
    if name not in {None, "lindera", "light"}:
        raise ValueError(f"Korean analyzer {name!r}: choose 'lindera' or 'light'")
    if name == "lindera" and _load() is None:
        raise ValueError(
            "Korean analyzer 'lindera' needs lindera-python-ko-dic: pip install 'memory-engine-server[local]'"
        )
    with _lock:
        _choice = name
    morphemes.cache_clear()
    analysis.cache_clear()
    person.cache_clear()


def analyzer() -> str:
    """The Korean analyzer in use: "lindera" when its package is installed, else "light"."""
    global _choice
    if _choice is None:
        with _lock:
            if _choice is None:
                wanted = os.environ.get("MEMORY_ENGINE_KOREAN_ANALYZER", "").strip().lower()
                _choice = "light" if wanted == "light" or _load() is None else "lindera"
    return _choice


def _load() -> Any:
    """The Lindera tokenizer, or None when the package is not installed."""
    global _tokenizer
    if _tokenizer is None:
        try:
            import lindera
        except ImportError:
            return None
        _tokenizer = lindera.Tokenizer(lindera.load_dictionary("embedded://ko-dic"), mode="normal")
        log.debug("Korean analyzer: lindera ko-dic loaded")
    return _tokenizer


@lru_cache(maxsize=65536)
def morphemes(word: str) -> tuple[str, ...] | None:
    """The content morphemes of one Hangul word, in order and unique; None when the light
    analyzer is in use (the caller falls back to it)."""
    if analyzer() != "lindera":
        return None
    out: dict[str, None] = {}
    for token in _load().tokenize(word):
        details: list[str] = token.details
        tags = details[0].split("+")
        if tags[0] not in _CONTENT_TAGS or (tags[0] == "UNKNOWN" and len(token.surface) < 2):
            continue  # a lone unknown syllable is the familiar 이 of a name ("지훈이"), not a word
        expression = details[7] if len(details) > 7 else "*"
        if tags[0] in _PREDICATES and "/" in expression:
            out[expression.split("/", 1)[0]] = None  # the lemma: "만났" → "만나"
            continue
        out[token.surface] = None
        if details[4:5] == ["Compound"] and "/" in expression:
            # "재택근무" also as "재택" and "근무", so a query for either part finds it.
            out.update(dict.fromkeys(part.split("/", 1)[0] for part in expression.split("+")))
    return tuple(out)


def merge(analysed: tuple[str, ...], stripped: tuple[str, ...]) -> tuple[str, ...]:
    """A word's terms: its morphemes, then its surface forms without a trailing particle. The
    dictionary does not know every name ("서연이는" reads as 서 + 연이), and a name the analysis
    misses still meets its other forms through the particle-stripped ones ("서연이가" → "서연")."""
    return tuple(dict.fromkeys((*analysed, *stripped)))


@lru_cache(maxsize=32768)
def analysis(word: str) -> tuple[tuple[str, str, str], ...] | None:
    """(surface, first tag, semantic class) per morpheme; None with the light analyzer."""
    if analyzer() != "lindera":
        return None
    return tuple((t.surface, t.details[0].split("+")[0], t.details[1]) for t in _load().tokenize(word))


@lru_cache(maxsize=32768)
def person(word: str) -> str | None:
    """The person's name a Hangul word starts with when the dictionary knows it as one
    ("지훈이는" → "지훈", "민지님" → "민지"); None otherwise or with the light analyzer."""
    morphs = analysis(word)
    if not morphs:
        return None
    surface, tag, meaning = morphs[0]
    return surface if tag == "NNP" and meaning == "인명" and len(surface) >= 2 else None
