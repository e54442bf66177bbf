"""EmbeddingGemma's encoder as an ONNX graph, written from numpy weights: no torch, no transformers.

EmbeddingGemma-300M is a Gemma 3 decoder run bidirectionally (`use_bidirectional_attention`),
then sentence-transformers' modules: mean pooling, two dense layers without bias or activation
(768 -> 3072 -> 768) and normalisation. Each layer, as `transformers`' Gemma3 computes it:

    h   = h + RMSNorm_post_attn(Attention(RMSNorm_in(h)))        # 3 query heads, 1 key/value head
    h   = h + RMSNorm_post_ffw(down(gelu_tanh(gate(x)) * up(x)))  # x = RMSNorm_pre_ffw(h)

with RMSNorm(x) = x / sqrt(mean(x^2) + eps) * (1 + w), queries and keys RMS-normalised per head
before rotary positions (base 10,000 on sliding layers, 1,000,000 on full ones), and scores scaled
by query_pre_attn_scalar^-0.5. The word rows come in already looked up (the 262k-row table is read
from its file on demand, `gemma.py`) and are scaled by sqrt(hidden) here.

The two dense layers are one linear map with nothing between them, so the graph applies their
product (one 768x768 matrix) to the masked mean: `mean` out, not normalised, so a long text's
windows can be combined first, as with the BERT graphs (`bert_onnx.py`).

Sliding layers attend within a band around each token; the graph takes the band as an input-free
mask built from the sequence length, so a call of up to `sliding_window` tokens is the same as
full attention and longer ones follow the model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["GemmaShape", "gemma_graph"]

OPSET = 18  # ReduceMean takes its axes as an input from 18
_MS = "com.microsoft"
_NEG = -1e9  # added to masked scores: softmax gives them exactly 0


@dataclass(frozen=True)
class GemmaShape:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    eps: float
    max_positions: int
    query_pre_attn_scalar: float
    rope_theta: float  # full-attention layers
    rope_local_theta: float  # sliding-window layers
    sliding_window: int
    sliding: tuple[bool, ...]  # per layer: sliding-window attention


Weights = Callable[[str], "NDArray[np.float32]"]


def _rope_tables(theta: float, head_dim: int, positions: int) -> tuple[Any, Any]:
    """cos and sin (positions, head_dim) as transformers' default rotary embedding makes them."""
    import numpy as np

    inv_freq = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.int64).astype(np.float32) / head_dim))
    freqs = np.arange(positions, dtype=np.float32)[:, None] * inv_freq[None, :].astype(np.float32)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def gemma_graph(shape: GemmaShape, weight: Weights, projection: Any, band: int) -> Any:
    """The encoder, mean pooling and the dense projection as an `onnx.ModelProto`.

    `weight(name)` gives a tensor by its name in the model's safetensors file (`layers.{i}.…`,
    `norm.weight`); `projection` is the (hidden, out) product of the dense layers; `band` is how
    far a sliding layer's token sees either way (|i - j| < band).
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: Any) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
        return output

    def ints(name: str, values: list[int]) -> str:
        return const(name, np.array(values, np.int64))

    last = ints("axis-1", [-1])
    one = const("one", np.array(1.0, np.float32))
    epsilon = const("eps", np.array(shape.eps, np.float32))

    def rms_norm(x: str, name: str, w: Any) -> str:
        """x / sqrt(mean(x^2) + eps) * (1 + w), over the last axis (ORT fuses the pattern)."""
        squared = node("Mul", [x, x], name + ".sq")
        mean = node("ReduceMean", [squared, last], name + ".ms", keepdims=1)
        root = node("Sqrt", [node("Add", [mean, epsilon], name + ".mse")], name + ".rms")
        normed = node("Div", [x, root], name + ".normed")
        return node("Mul", [normed, const(name + ".scale", (1.0 + w).astype(np.float32))], name)

    def matmul(x: str, name: str, w: Any) -> str:
        return node("MatMul", [x, const(name + ".w", np.ascontiguousarray(w.T))], name)

    # Word rows scaled by sqrt(hidden), as Gemma3TextScaledWordEmbedding does (in float32).
    scale = const("emb.scale", np.array(np.float32(shape.hidden**0.5), np.float32))
    h = node("Mul", ["inputs_embeds", scale], "emb.out")

    seq = node("Shape", ["inputs_embeds"], "seq", start=1, end=2)
    zero = ints("zero", [0])
    batch_seq_heads = ints("bshd", [0, 0, shape.heads, shape.head_dim])
    batch_seq_kv = ints("bskd", [0, 0, shape.kv_heads, shape.head_dim])
    batch_seq_hidden = ints("bsh", [0, 0, shape.heads * shape.head_dim])

    # Rotary tables for positions 0..S-1 (right padding: every row starts at 0), (S, 1, D) so they
    # broadcast over (B, S, heads, D).
    rope: dict[bool, tuple[str, str]] = {}
    for sliding, theta in ((False, shape.rope_theta), (True, shape.rope_local_theta)):
        cos, sin = _rope_tables(theta, shape.head_dim, shape.max_positions)
        tag = "local" if sliding else "global"
        cos_s = node("Slice", [const(f"rope.{tag}.cos", cos[:, None, :]), zero, seq], f"rope.{tag}.cos.s")
        sin_s = node("Slice", [const(f"rope.{tag}.sin", sin[:, None, :]), zero, seq], f"rope.{tag}.sin.s")
        rope[sliding] = (cos_s, sin_s)
    half = shape.head_dim // 2

    def rotary(x: str, name: str, sliding: bool) -> str:
        cos_s, sin_s = rope[sliding]
        first = node("Slice", [x, ints(name + ".s0", [0]), ints(name + ".e0", [half]), last], name + ".x1")
        second = node(
            "Slice", [x, ints(name + ".s1", [half]), ints(name + ".e1", [shape.head_dim]), last], name + ".x2"
        )
        rotated = node("Concat", [node("Neg", [second], name + ".nx2"), first], name + ".rot", axis=-1)
        return node(
            "Add",
            [node("Mul", [x, cos_s], name + ".cos"), node("Mul", [rotated, sin_s], name + ".sin")],
            name,
        )

    # Additive masks: padding keys (B, 1, 1, S), and for sliding layers also the band (S, S).
    mask_f = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    pad_bias = node(
        "Mul",
        [node("Sub", [one, mask_f], "mask.inv"), const("neg", np.array(_NEG, np.float32))],
        "mask.bias2d",
    )
    full_bias = node("Unsqueeze", [pad_bias, ints("axes12", [1, 2])], "mask.full")
    positions = node(
        "Range",
        [
            const("r0", np.array(0, np.int64)),
            node("Squeeze", [seq, zero], "seq.scalar"),
            const("r1", np.array(1, np.int64)),
        ],
        "positions",
    )
    distance = node(
        "Abs",
        [node("Sub", [node("Unsqueeze", [positions, last], "pos.col"), positions], "pos.diff")],
        "pos.dist",
    )
    outside = node("GreaterOrEqual", [distance, const("band", np.array(band, np.int64))], "band.outside")
    band_bias = node(
        "Mul",
        [node("Cast", [outside], "band.f", to=TensorProto.FLOAT), const("neg2", np.array(_NEG, np.float32))],
        "band.bias",
    )
    sliding_bias = node("Add", [full_bias, band_bias], "mask.sliding")
    attn_scale = const("attn.scale", np.array(shape.query_pre_attn_scalar**-0.5, np.float32))

    for i in range(shape.layers):
        p = f"layers.{i}."
        sliding = shape.sliding[i]

        def w(name: str, p: str = p) -> Any:
            return weight(p + name)

        x = rms_norm(h, p + "in", w("input_layernorm.weight"))
        q = node("Reshape", [matmul(x, p + "q", w("self_attn.q_proj.weight")), batch_seq_heads], p + "q.4d")
        k = node("Reshape", [matmul(x, p + "k", w("self_attn.k_proj.weight")), batch_seq_kv], p + "k.4d")
        v = node("Reshape", [matmul(x, p + "v", w("self_attn.v_proj.weight")), batch_seq_kv], p + "v.4d")
        q = rotary(rms_norm(q, p + "qn", w("self_attn.q_norm.weight")), p + "q.rope", sliding)
        k = rotary(rms_norm(k, p + "kn", w("self_attn.k_norm.weight")), p + "k.rope", sliding)
        q_t = node("Transpose", [q], p + "q.t", perm=[0, 2, 1, 3])  # (B, H, S, D)
        k_t = node("Transpose", [k], p + "k.t", perm=[0, 2, 3, 1])  # (B, 1, D, S): shared by heads
        v_t = node("Transpose", [v], p + "v.t", perm=[0, 2, 1, 3])  # (B, 1, S, D)
        scores = node("Mul", [node("MatMul", [q_t, k_t], p + "qk"), attn_scale], p + "scores")
        biased = node("Add", [scores, sliding_bias if sliding else full_bias], p + "biased")
        probs = node("Softmax", [biased], p + "probs", axis=-1)
        context = node("Transpose", [node("MatMul", [probs, v_t], p + "ctx")], p + "ctx.t", perm=[0, 2, 1, 3])
        merged = node("Reshape", [context, batch_seq_hidden], p + "ctx.merged")
        attended = matmul(merged, p + "o", w("self_attn.o_proj.weight"))
        h = node(
            "Add", [h, rms_norm(attended, p + "post_attn", w("post_attention_layernorm.weight"))], p + "h1"
        )

        x = rms_norm(h, p + "pre_ffw", w("pre_feedforward_layernorm.weight"))
        gate = node("FastGelu", [matmul(x, p + "gate", w("mlp.gate_proj.weight"))], p + "gelu", domain=_MS)
        inner = node("Mul", [gate, matmul(x, p + "up", w("mlp.up_proj.weight"))], p + "gated")
        out = matmul(inner, p + "down", w("mlp.down_proj.weight"))
        h = node("Add", [h, rms_norm(out, p + "post_ffw", w("post_feedforward_layernorm.weight"))], p + "h2")

    h = rms_norm(h, "final", weight("norm.weight"))
    # Mean over real tokens (the prompt included, as its pooling config says), then the dense map.
    mask_3d = node("Unsqueeze", [mask_f, last], "mask.3d")
    total = node("ReduceSum", [node("Mul", [h, mask_3d], "masked"), ints("axis1", [1])], "total", keepdims=0)
    count = node(
        "Clip",
        [
            node("ReduceSum", [mask_3d, "axis1"], "count", keepdims=0),
            const("floor", np.array(1e-9, np.float32)),
        ],
        "count.clipped",
    )
    pooled = node("Div", [total, count], "pooled")
    node("MatMul", [pooled, const("dense.w", np.ascontiguousarray(projection, dtype=np.float32))], "mean")

    batch_seq = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "gemma_mean",
        [
            helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, [*batch_seq, shape.hidden]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, batch_seq),
        ],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["batch", projection.shape[1]])],
        inits,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(_MS, 1)]
    return helper.make_model(graph, opset_imports=opsets, producer_name="memory-engine")
