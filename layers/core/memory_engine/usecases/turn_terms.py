"""Buffered turns' words for BM25: a bounded head of each turn, analysed once and kept.

Buffered turns are not in the index, so retrieve scores them itself (`usecases.retrieve`). Their
analysis (English stemming; Korean morphology reads some 50-100k characters a second) holds the
interpreter, and so holds up every other request of the process: a retrieve must neither redo it
on every call nor let a few very long turns make it long.

- A turn's words are read from its first `LEXICAL_MAX_CHARS` characters (the embedder reads its
  first `embed_max_chars`; a longer turn's date line is past them), its speaker labels from its
  whole text (a pattern, no analysis).
- What was read is kept in the process's `engine.turn_terms`, keyed by the text's digest: a turn
  is analysed once while it stays buffered, and retrieve scores from the counts
  (`retrieval.bm25.bm25_counted`), a cost that follows the number of turns, not their length.
- One retrieve analyses turns it has not seen within `budget_chars` characters (newest first, the
  caller's order) and while the request has `time_for_optional_work`; short turns always (a few
  milliseconds at most). A turn left out is scored by its vector alone until a later retrieve has
  analysed it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from memory_engine.engine import Engine
from memory_engine.retrieval.features import AnalysedText
from memory_engine.usecases.turn_vectors import time_for_optional_work

# The head of a turn whose words BM25 reads: 8x what the embedder reads by default, a few
# milliseconds of English analysis, well under a second of Korean.
LEXICAL_MAX_CHARS = 16_384
# Turns up to this long are always analysed: a few milliseconds at most.
SHORT_TEXT_CHARS = 4_096


def digest(text: str) -> str:
    # surrogatepass: a digest, not an encoding; lone surrogates are refused at the edge anyway.
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def analysed(
    engine: Engine, texts: Iterable[tuple[str, str]], budget_chars: float
) -> dict[str, AnalysedText]:
    """The analysed form of each (caller's key, text) of `texts`: from the cache, or read now
    within the budget (see the module's docstring); a text left out has none."""
    found: dict[str, AnalysedText] = {}
    spent = 0
    for key, text in texts:
        cache_key = digest(text)
        known = engine.turn_terms.get(cache_key)
        if known is None:
            words = text[:LEXICAL_MAX_CHARS]
            if len(words) > SHORT_TEXT_CHARS:
                if spent + len(words) > budget_chars or not time_for_optional_work():
                    continue
                spent += len(words)
            known = AnalysedText.read(words, text)
            engine.turn_terms.put(cache_key, known)
        found[key] = known
    return found
