"""Would a second embedder pay? Issue #14's turn-level fusion with e5, MiniLM, or both mixed.

    python -m bench.locomo.two_embedders [--data FILE]

One document per turn, as `baselines.TurnFusion` (stemmed BM25 over the turn and over its ±1
window with the session date, each min-max normalised, 0.25 / 0.25 beside the dense share); the
dense share is e5's cosine, MiniLM's, or a mix of the two (each min-max normalised first). Prints
Recall@5/10 and NDCG@10 over categories 1–4. Vectors come from the harness's cache in bench/.cache.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from pathlib import Path

from bench.locomo.baselines import _min_max
from bench.locomo.data import default_data, load
from bench.locomo.engine_run import CachingEmbedder
from bench.locomo.metrics import HEADLINE, ndcg_at, recall_at
from memory_engine.retrieval.bm25 import Bm25
from memory_engine.retrieval.text import tokenize

CACHE = Path(__file__).resolve().parents[1] / ".cache"
E5_SHARES = (0.0, 0.3, 0.5, 0.7, 1.0)  # of the dense share: 0 = MiniLM alone, 1 = e5 alone
DENSE_SHARES = (0.5, 0.6)


def main(argv: Sequence[str] | None = None) -> dict[str, tuple[float, float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data())
    args = parser.parse_args(argv)
    import numpy as np

    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    e5 = CachingEmbedder(OnnxEmbedder("e5"), CACHE / "embeddings-e5.pkl")
    minilm = CachingEmbedder(OnnxEmbedder("minilm"), CACHE / "embeddings-minilm.pkl")
    scores: dict[str, list[tuple[float, float, float]]] = {}
    for conversation in load(args.data):
        turns = conversation.turns
        ids = [turn.dia_id for turn in turns]
        dates = {s.number: f"{s.date.day} {s.date:%B %Y}" for s in conversation.sessions}
        own, window = Bm25(k1=0.9, b=0.3), Bm25(k1=0.9, b=0.3)
        for i, turn in enumerate(turns):
            near = (turns[j] for j in (i - 1, i, i + 1) if 0 <= j < len(turns))
            around = [other.line() for other in near if other.session == turn.session]
            own.add(turn.dia_id, tokenize(f"{turn.line()}\n{dates[turn.session]}"))
            window.add(turn.dia_id, tokenize("\n".join([*around, dates[turn.session]])))
        lines = [turn.line() for turn in turns]
        questions = [q for q in conversation.questions if q.category in HEADLINE and q.gold_turns]
        asked = [q.question for q in questions]
        vectors = {
            "e5": (np.asarray(e5.embed(lines)), np.asarray(e5.embed(asked, "query"))),
            "minilm": (np.asarray(minilm.embed(lines)), np.asarray(minilm.embed(asked, "query"))),
        }
        for n, question in enumerate(questions):
            terms = tokenize(question.question)
            lexical = [own.scores(terms), window.scores(terms)]
            words = sum(0.5 * _min_max(np.asarray([found.get(i, 0.0) for i in ids])) for found in lexical)
            cosine = {name: _min_max(docs @ queries[n]) for name, (docs, queries) in vectors.items()}
            for e5_share in E5_SHARES:
                dense = e5_share * cosine["e5"] + (1 - e5_share) * cosine["minilm"]
                for share in DENSE_SHARES:
                    fused = (1 - share) * words + share * dense
                    ranked = [ids[i] for i in np.argsort(-fused, kind="stable")]
                    row = scores.setdefault(f"e5 {e5_share:.1f} of dense {share:.1f}", [])
                    gold = question.gold_turns
                    row.append(
                        (recall_at(ranked, gold, 5), recall_at(ranked, gold, 10), ndcg_at(ranked, gold, 10))
                    )
        e5.save()
        minilm.save()
    summary = {
        name: tuple(statistics.mean(column) for column in zip(*rows, strict=True))
        for name, rows in scores.items()
    }
    for name, (r5, r10, ndcg) in summary.items():
        print(f"{name:24s} R@5 {r5:.3f}  R@10 {r10:.3f}  NDCG@10 {ndcg:.3f}")
    return summary


if __name__ == "__main__":
    main()
