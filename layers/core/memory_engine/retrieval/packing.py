"""Packing retrieve hits into a token budget (`options.max_tokens`), best evidence first.

Hits are taken in rank order. A hit whose whole `content` fits the tokens left goes in whole;
a memory that does not fit is cut to its matched turns (its `evidence`, best first), as many
whole turns as fit, never part of one; a hit with nothing that fits is left out and the next one
tried, so a long memory does not waste the budget that shorter hits after it could use.
Tokens are counted by `retrieval.tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_engine.models.api import RetrievedMemory
from memory_engine.retrieval.tokens import count_tokens

__all__ = ["pack", "smallest_piece"]

_JOIN = "\n"


def pack(hits: Sequence[RetrievedMemory], budget: int) -> tuple[list[RetrievedMemory], int]:
    """The hits that fit `budget` tokens of content, some cut to whole turns, and the tokens used."""
    packed: list[RetrievedMemory] = []
    used = 0
    for hit in hits:
        left = budget - used
        cost = count_tokens(hit.content)
        if cost <= left:
            packed.append(hit)
            used += cost
            continue
        kept = []
        spent = 0
        for turn in hit.evidence:
            turn_cost = count_tokens(turn.text)
            if turn.text and spent + turn_cost <= left:
                kept.append(turn)
                spent += turn_cost
        if not kept:
            continue
        # Turns joined by a newline, which counts as no token: the cut content costs what its turns do.
        content = _JOIN.join(turn.text for turn in kept)
        packed.append(hit.model_copy(update={"content": content, "evidence": kept, "truncated": True}))
        used += count_tokens(content)
    return packed, used


def smallest_piece(hits: Sequence[RetrievedMemory]) -> int:
    """The fewest tokens any hit can be packed into: its whole content or one of its turns."""
    costs = [count_tokens(hit.content) for hit in hits]
    costs += [count_tokens(turn.text) for hit in hits for turn in hit.evidence if turn.text]
    return min(costs, default=0)
