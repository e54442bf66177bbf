"""A BERT encoder's forward pass in plain numpy: the reference the ONNX graphs are checked against.

Written from the model's definition (post-LayerNorm BERT, exact GELU, masked mean pooling), apart
from `bert_onnx`, so a wiring mistake in the graph (a transposed matrix, a swapped bias, a LayerNorm
on the wrong branch) shows as a disagreement.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from memory_engine.adapters.local.encoders import E5Encoder, MiniLmEncoder


def _layer_norm(
    x: NDArray[np.float64], w: NDArray[np.float32], b: NDArray[np.float32], eps: float
) -> NDArray[np.float64]:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _gelu(x: NDArray[np.float64]) -> NDArray[np.float64]:
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def mean_of_last_layer(model: E5Encoder | MiniLmEncoder, ids: list[int]) -> NDArray[np.float64]:
    """The mean of the last hidden states of one window of token ids (<s>/</s> included)."""
    s = model.shape
    w = model.weight
    x = model.word_rows(np.asarray(ids, np.int64)).astype(np.float64)
    x = x + w("emb.pos")[: len(ids)] + w("emb.type0")
    x = _layer_norm(x, w("emb.ln.w"), w("emb.ln.b"), s.eps)
    size = s.hidden // s.heads
    for i in range(s.layers):

        def lin(h: NDArray[np.float64], role: str, i: int = i) -> NDArray[np.float64]:
            return h @ w(f"l{i}.{role}.w").T + w(f"l{i}.{role}.b")

        q, k, v = (lin(x, r).reshape(len(ids), s.heads, size).transpose(1, 0, 2) for r in "qkv")
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        context = (scores / scores.sum(-1, keepdims=True)) @ v
        attended = context.transpose(1, 0, 2).reshape(len(ids), s.hidden)
        x = _layer_norm(x + lin(attended, "ao"), w(f"l{i}.aln.w"), w(f"l{i}.aln.b"), s.eps)
        x = _layer_norm(x + lin(_gelu(lin(x, "fi")), "fo"), w(f"l{i}.oln.w"), w(f"l{i}.oln.b"), s.eps)
    return x.mean(0)
