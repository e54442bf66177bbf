"""Ranking metrics of the protocol, per question, and their averages per category.

A ranking is a list of dia_ids, best first, repeats already dropped. Relevance is binary: a gold turn.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bench.quality.locomo.data import session_of

HEADLINE = (1, 2, 3, 4)  # category 5 (adversarial) is reported apart
CURVE_DEPTH = 50


def recall_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of gold turns among the first k."""
    if not gold:
        return 0.0
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def ndcg_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Binary-relevance NDCG: DCG of the first k over the DCG of all gold turns ranked first."""
    relevant = set(gold)
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    relevant = set(gold)
    return next((1.0 / (i + 1) for i, item in enumerate(ranked) if item in relevant), 0.0)


def session_recall_at(ranked: Sequence[str], gold_sessions: Sequence[int], k: int) -> float:
    """Recall of gold sessions among the first k sessions of the ranking collapsed to sessions."""
    if not gold_sessions:
        return 0.0
    sessions = list(dict.fromkeys(session_of(item) for item in ranked))
    return len(set(sessions[:k]) & set(gold_sessions)) / len(set(gold_sessions))


@dataclass(frozen=True)
class QuestionScore:
    category: int
    recall_5: float
    recall_10: float
    ndcg_10: float
    mrr: float
    session_recall_5: float
    tokens: float  # tokens of `content` a caller reads to see the first 10 turns
    curve: tuple[float, ...]  # Recall@k for k = 1..CURVE_DEPTH
    # Recall of the turns returned within 500 / 1,000 tokens of content (options.max_tokens).
    recall_500t: float = 0.0
    recall_1000t: float = 0.0


def score(
    ranked: Sequence[str],
    gold: Sequence[str],
    gold_sessions: Sequence[int],
    category: int,
    tokens: float,
    within: Sequence[Sequence[str]] = ((), ()),
) -> QuestionScore:
    """`within`: the turns returned within 500 and within 1,000 tokens of content."""
    return QuestionScore(
        category=category,
        recall_5=recall_at(ranked, gold, 5),
        recall_10=recall_at(ranked, gold, 10),
        ndcg_10=ndcg_at(ranked, gold, 10),
        mrr=reciprocal_rank(ranked, gold),
        session_recall_5=session_recall_at(ranked, gold_sessions, 5),
        tokens=tokens,
        curve=tuple(recall_at(ranked, gold, k) for k in range(1, CURVE_DEPTH + 1)),
        recall_500t=recall_at(within[0], gold, len(within[0])),
        recall_1000t=recall_at(within[1], gold, len(within[1])),
    )


METRICS = (
    *("recall_5", "recall_10", "ndcg_10", "mrr", "session_recall_5", "tokens"),
    *("recall_500t", "recall_1000t"),
)


@dataclass
class Summary:
    """Averages over a group of questions (headline: categories 1–4)."""

    questions: int = 0
    means: dict[str, float] = field(default_factory=dict)
    curve: list[float] = field(default_factory=list)


def summarise(scores: Iterable[QuestionScore]) -> Summary:
    group = list(scores)
    if not group:
        return Summary()
    means = {name: sum(getattr(s, name) for s in group) / len(group) for name in METRICS}
    curve = [sum(s.curve[i] for s in group) / len(group) for i in range(CURVE_DEPTH)]
    return Summary(len(group), means, curve)


def by_category(scores: Sequence[QuestionScore]) -> dict[str, Summary]:
    """ "all" (categories 1–4, the headline) and one entry per category present, 5 included."""
    out = {"all": summarise(s for s in scores if s.category in HEADLINE)}
    for category in sorted({s.category for s in scores}):
        out[str(category)] = summarise(s for s in scores if s.category == category)
    return out
