"""Counting the tokens of returned `content`: the core's own counter (`memory_engine.retrieval.tokens`),
so the benchmark's budgets are the ones `options.max_tokens` keeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory_engine.retrieval.tokens import count_tokens

__all__ = ["BUDGETS", "count_tokens", "tokenizer_name", "within_budget"]

BUDGETS = (500, 1000)  # tokens of content a caller puts in a prompt: Recall within these


def tokenizer_name() -> str:
    return "memory_engine.retrieval.tokens (pure-Python estimate, about 2 % above MiniLM WordPiece)"


def within_budget(ranked: Sequence[str], texts: Mapping[str, str], budget: int) -> list[str]:
    """A turn-level ranking packed as `options.max_tokens` packs turns: in order, each whole turn
    that still fits the tokens left (a long one is skipped, not cut)."""
    kept: list[str] = []
    left = budget
    for item in ranked:
        cost = count_tokens(texts[item])
        if cost <= left:
            kept.append(item)
            left -= cost
    return kept
