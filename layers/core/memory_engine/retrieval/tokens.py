"""Counting tokens of returned text without a tokenizer library (the Lambda layer stays light).

An estimate shaped like a subword tokenizer's count, the same on every backend and in the
benchmark (bench/locomo counts `content` with it): a word is one token per 8 characters begun
("memory" 1, "conversation" 2), a Hangul run one per 2 syllables begun, any other letter of a
script written without spaces (Han, Kana, Thai) one each, every punctuation mark or symbol one.
On LoCoMo's English it counts 2 % more than the MiniLM WordPiece tokenizer (the benchmark
prints both). Budgets (`options.max_tokens`) are kept against this count.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["count_tokens"]

_HANGUL = "\uac00-\ud7a3\u1100-\u11ff\u3131-\u318e"
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f"
_PIECE = re.compile(rf"([{_HANGUL}]+)|([{_UNSPACED}])|([^\W_{_HANGUL}{_UNSPACED}]+)|([^\w\s]|_)")
_WORD_CHARS = 8
_HANGUL_CHARS = 2


@lru_cache(maxsize=65536)
def count_tokens(text: str) -> int:
    """Estimated tokens of `text` (0 for empty or blank text)."""
    total = 0
    for hangul, _unspaced, word, _mark in _PIECE.findall(text):
        if hangul:
            total += -(-len(hangul) // _HANGUL_CHARS)
        elif word:
            total += -(-len(word) // _WORD_CHARS)
        else:
            total += 1  # one character of an unspaced script, or one mark
    return total
