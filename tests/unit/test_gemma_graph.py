"""EmbeddingGemma's ONNX graph (`gemma_onnx.py`) against a plain-numpy forward pass of a tiny
random Gemma 3, written from transformers' definition apart from the graph: grouped-query
attention, per-head RMS norms of queries and keys, two rotary bases, the bidirectional sliding
band, the (1 + w) RMS norms around both blocks, the gated tanh-GELU, mean pooling over real tokens
and the dense projection. Runs without the real model (tests/contract/test_gemma_embedder.py
checks that against sentence-transformers)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from memory_engine.adapters.local.gemma_onnx import GemmaShape, gemma_graph

SHAPE = GemmaShape(
    hidden=16,
    layers=3,
    heads=2,
    kv_heads=1,
    head_dim=8,
    eps=1e-6,
    max_positions=32,
    query_pre_attn_scalar=8.0,
    rope_theta=1_000_000.0,
    rope_local_theta=10_000.0,
    sliding_window=6,
    sliding=(True, False, True),
)
BAND = 3  # a sliding layer's token sees |i - j| < 3


def _weights(seed: int = 7) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    h, f, d = SHAPE.hidden, 24, SHAPE.head_dim

    def m(rows: int, cols: int) -> Any:
        return (rng.standard_normal((rows, cols)) / math.sqrt(cols)).astype(np.float32)

    def v(n: int) -> Any:
        return (0.3 * rng.standard_normal(n)).astype(np.float32)

    weights = {"norm.weight": v(h)}
    for i in range(SHAPE.layers):
        p = f"layers.{i}."
        weights |= {
            p + "input_layernorm.weight": v(h),
            p + "post_attention_layernorm.weight": v(h),
            p + "pre_feedforward_layernorm.weight": v(h),
            p + "post_feedforward_layernorm.weight": v(h),
            p + "self_attn.q_proj.weight": m(SHAPE.heads * d, h),
            p + "self_attn.k_proj.weight": m(SHAPE.kv_heads * d, h),
            p + "self_attn.v_proj.weight": m(SHAPE.kv_heads * d, h),
            p + "self_attn.o_proj.weight": m(h, SHAPE.heads * d),
            p + "self_attn.q_norm.weight": v(d),
            p + "self_attn.k_norm.weight": v(d),
            p + "mlp.gate_proj.weight": m(f, h),
            p + "mlp.up_proj.weight": m(f, h),
            p + "mlp.down_proj.weight": m(h, f),
        }
    return weights


def _rms(x: Any, w: Any) -> Any:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + SHAPE.eps) * (1.0 + w)


def _rotate(x: Any, theta: float) -> Any:
    """Rotary positions 0..S-1 on (S, heads, D), rotate_half style."""
    d = x.shape[-1]
    inv = 1.0 / theta ** (np.arange(0, d, 2) / d)
    angles = np.arange(x.shape[0])[:, None] * inv[None, :]
    cos = np.cos(np.concatenate([angles, angles], -1))[:, None, :]
    sin = np.sin(np.concatenate([angles, angles], -1))[:, None, :]
    half = d // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def _gelu_tanh(x: Any) -> Any:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def _reference(w: dict[str, Any], rows: Any, projection: Any) -> Any:
    """One text (no padding): the pooled, projected vector, in float64."""
    x = rows.astype(np.float64) * math.sqrt(SHAPE.hidden)
    s, d = x.shape[0], SHAPE.head_dim
    distance = np.abs(np.arange(s)[:, None] - np.arange(s)[None, :])
    for i in range(SHAPE.layers):
        p = f"layers.{i}."
        sliding = SHAPE.sliding[i]
        a = _rms(x, w[p + "input_layernorm.weight"])
        q = (a @ w[p + "self_attn.q_proj.weight"].T).reshape(s, SHAPE.heads, d)
        k = (a @ w[p + "self_attn.k_proj.weight"].T).reshape(s, SHAPE.kv_heads, d)
        v = (a @ w[p + "self_attn.v_proj.weight"].T).reshape(s, SHAPE.kv_heads, d)
        theta = SHAPE.rope_local_theta if sliding else SHAPE.rope_theta
        q = _rotate(_rms(q, w[p + "self_attn.q_norm.weight"]), theta)
        k = _rotate(_rms(k, w[p + "self_attn.k_norm.weight"]), theta)
        heads = []
        for head in range(SHAPE.heads):
            kv = head * SHAPE.kv_heads // SHAPE.heads
            scores = q[:, head] @ k[:, kv].T * SHAPE.query_pre_attn_scalar**-0.5
            if sliding:
                scores = np.where(distance < BAND, scores, -np.inf)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            heads.append(probs @ v[:, kv])
        attended = np.concatenate(heads, -1) @ w[p + "self_attn.o_proj.weight"].T
        x = x + _rms(attended, w[p + "post_attention_layernorm.weight"])
        f = _rms(x, w[p + "pre_feedforward_layernorm.weight"])
        gated = _gelu_tanh(f @ w[p + "mlp.gate_proj.weight"].T) * (f @ w[p + "mlp.up_proj.weight"].T)
        x = x + _rms(gated @ w[p + "mlp.down_proj.weight"].T, w[p + "post_feedforward_layernorm.weight"])
    return _rms(x, w["norm.weight"]).mean(0) @ projection


@pytest.fixture(scope="module")
def session() -> tuple[Any, dict[str, Any], Any]:
    import onnxruntime as ort

    weights = _weights()
    projection = np.random.default_rng(3).standard_normal((SHAPE.hidden, 12)).astype(np.float32)
    graph = gemma_graph(SHAPE, weights.__getitem__, projection, BAND)
    return (
        ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"]),
        weights,
        projection,
    )


def test_the_graph_computes_the_model_for_texts_of_every_length_in_one_padded_batch(
    session: tuple[Any, dict[str, Any], Any],
) -> None:
    ort_session, weights, projection = session
    rng = np.random.default_rng(11)
    # Given three texts of 10, 4 and 1 tokens (past the band, within it, alone), right-padded
    lengths = [10, 4, 1]
    rows = [rng.standard_normal((n, SHAPE.hidden)).astype(np.float32) for n in lengths]
    batch = np.zeros((3, 10, SHAPE.hidden), np.float32)
    mask = np.zeros((3, 10), np.int64)
    for index, text in enumerate(rows):
        batch[index, : len(text)] = text
        batch[index, len(text) :] = 5.0  # padding rows the graph must ignore
        mask[index, : len(text)] = 1

    # When the graph runs them together
    (got,) = ort_session.run(None, {"inputs_embeds": batch, "attention_mask": mask})

    # Then each text's vector is the reference forward pass of that text alone
    for index, text in enumerate(rows):
        want = _reference(weights, text, projection)
        assert got[index].shape == (12,)
        assert np.abs(got[index] - want).max() < 1e-4 * max(1.0, float(np.abs(want).max()))


def test_the_sliding_band_matters_past_its_width(session: tuple[Any, dict[str, Any], Any]) -> None:
    # Guard for the test above: with full attention on every layer the 10-token text differs, so
    # the band is really exercised there
    ort_session, weights, projection = session
    text = np.random.default_rng(11).standard_normal((10, SHAPE.hidden)).astype(np.float32)
    (got,) = ort_session.run(
        None, {"inputs_embeds": text[None], "attention_mask": np.ones((1, 10), np.int64)}
    )
    unbanded = gemma_graph(SHAPE, weights.__getitem__, projection, band=100)

    import onnxruntime as ort

    other = ort.InferenceSession(unbanded.SerializeToString(), providers=["CPUExecutionProvider"])
    (full,) = other.run(None, {"inputs_embeds": text[None], "attention_mask": np.ones((1, 10), np.int64)})
    assert np.abs(got - full).max() > 1e-3
