"""EmbeddingGemma's own vectors, from sentence-transformers on torch: the reference the engine's ONNX
graph (adapters/local/gemma_onnx.py) is checked against (tests/contract/test_gemma_embedder.py).

Run once, in a venv of its own with torch and sentence-transformers (never the project's):

    python -m venv /tmp/ref && /tmp/ref/bin/pip install torch 'sentence-transformers>=5.1'
    /tmp/ref/bin/python bench/quality/gemma_reference.py MODEL_DIR tests/contract/data/gemma_reference.json

It writes, for each text and mode, the vector sentence-transformers gives with the model's own
prompts (`prompt_name` query / document), rounded to 6 decimals.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TEXTS = [
    "My cat Mochi was born in Lisbon.",
    "Which planet is known as the Red Planet?",
    "Mars, known for its reddish appearance, is often referred to as the Red Planet.",
    "제 강아지 이름은 후추예요. 땅콩 알레르기가 있어요!",
    "MIXED 한국어 and English — 2023년 5월 7일",
    "emoji 🎉🦄 and rare signs 𓀀𓀁𓀂 ∰∯",
    "x",
    " ".join(f"turn {i} says something about the lake trip" for i in range(40)),  # ~400 tokens
]


def main(model_dir: str, out: str) -> int:
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu")
    result: dict[str, object] = {
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "texts": TEXTS,
    }
    for mode, prompt in (("query", "query"), ("passage", "document")):
        vectors = model.encode(TEXTS, prompt_name=prompt, normalize_embeddings=True, batch_size=1)
        result[mode] = [[round(float(value), 6) for value in vector] for vector in vectors]
    Path(out).write_text(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
