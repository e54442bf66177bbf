"""The ONNX folder format, and the export of a sentence-transformers model into it: one ONNX graph
that returns unit sentence vectors.

    python -m memory_engine.adapters.local.onnx_export [--model-dir DIR] [--out DIR]

The graph is the transformer plus mean pooling and L2 normalisation, so the runtime
(`OnnxMiniLmEmbedder`) only tokenizes, pads and runs it: no torch at serving time. The export
itself needs torch, sentence-transformers and onnx (the `local` extra): it runs once, at image
build time for the embedding Lambda, or on first use locally. ONNX Runtime's transformer optimizer
then fuses attention, GELU and layer norms; the fused graph gives the same vectors as
sentence-transformers to within 1e-6 (`bench/embedding.py` checks it on every run).

The output folder holds `model.onnx`, `tokenizer.json` and `embedder.json` (max length,
dimension, input names, and the fingerprint of the model it came from).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger("memory_engine.export_onnx")

MANIFEST = "embedder.json"
GRAPH = "model.onnx"
TOKENIZER = "tokenizer.json"
FORMAT = 1
OPSET = 17
# Files whose content decides the vectors; the weights are hashed too, whatever their name.
_FINGERPRINTED = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "1_Pooling/config.json",
)


def fingerprint(model_dir: Path) -> str:
    """A short digest of the model's configuration and weights: the export's cache key."""
    digest = hashlib.sha256(f"format {FORMAT} opset {OPSET}".encode())
    weights = sorted(p for p in model_dir.iterdir() if p.suffix in {".safetensors", ".bin"})
    for path in [model_dir / name for name in _FINGERPRINTED] + weights:
        if path.is_file():
            digest.update(str(path.relative_to(model_dir)).encode())
            hash_file(digest, path)
    return digest.hexdigest()[:16]


def hash_file(digest: Any, path: Path) -> None:
    """Feed a file to a hashlib digest a megabyte at a time (model weights run to 100 MB)."""
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)


def cache_dir(name: str) -> Path:
    """An export's folder in the user's cache, used when no folder is configured."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "memory-engine" / "onnx" / name


def default_onnx_dir(model_dir: Path) -> Path:
    """Where the export of `model_dir` is cached when no folder is configured."""
    return cache_dir(fingerprint(model_dir))


def export(model_dir: Path, out_dir: Path, optimize: bool = True) -> Path:
    """Write the ONNX folder for `model_dir` into `out_dir` (replaced atomically); returns `out_dir`.

    Raises ValueError for a model whose pipeline is not transformer → mean pooling (→ normalise).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    from sentence_transformers import SentenceTransformer

    started = time.perf_counter()
    # Eager attention exports as plain MatMul/Softmax, the pattern ORT's optimizer fuses.
    model = SentenceTransformer(
        str(model_dir), device="cpu", model_kwargs={"attn_implementation": "eager"}
    ).eval()
    transformer: Any = model[0]  # the Transformer module (typed as a bare nn.Module by torch)
    _check_mean_pooling(model)
    tokenizer = transformer.tokenizer
    inputs = [
        name
        for name in ("input_ids", "attention_mask", "token_type_ids")
        if name in tokenizer.model_input_names
    ]
    wrapper: Any = _pooled(transformer.auto_model, inputs)
    sample = tokenizer(["an example sentence", "another"], padding=True, return_tensors="pt")
    with staged(out_dir) as staging:
        raw = staging / "raw.onnx"
        with torch.no_grad():
            dimension = int(wrapper(*(sample[name] for name in inputs)).shape[1])
        # The tracer warns about Python-side branches in the attention mask code; they depend on
        # shapes that are equal for every encoder input, and bench/embedding.py checks the vectors.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                wrapper,
                tuple(sample[name] for name in inputs),
                str(raw),
                input_names=inputs,
                output_names=["sentence_embedding"],
                dynamic_axes={
                    **{name: {0: "batch", 1: "sequence"} for name in inputs},
                    "sentence_embedding": {0: "batch"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        config = transformer.auto_model.config
        if optimize:
            optimize_bert(raw, staging / GRAPH, config.num_attention_heads, config.hidden_size)
            raw.unlink()
        else:
            raw.rename(staging / GRAPH)
        _write_tokenizer(model_dir, tokenizer, staging)
        manifest = {
            "format": FORMAT,
            "max_length": int(transformer.max_seq_length),
            "dimension": dimension,
            "inputs": inputs,
            "do_lower_case": bool(getattr(transformer, "do_lower_case", False)),
            "source": str(model_dir),
            "fingerprint": fingerprint(model_dir),
            "optimized": optimize,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    log.info("exported %s to %s in %.1f s", model_dir, out_dir, time.perf_counter() - started)
    return out_dir


def _check_mean_pooling(model: Any) -> None:
    # By class name and config: the module classes moved between sentence-transformers versions.
    kinds = [type(module).__name__ for module in model]
    if kinds[:2] != ["Transformer", "Pooling"] or any(kind != "Normalize" for kind in kinds[2:]):
        raise ValueError(f"cannot export {kinds}: expected Transformer, Pooling[, Normalize]")
    config = model[1].get_config_dict()
    mode = config.get("pooling_mode") or ("mean" if config.get("pooling_mode_mean_tokens") else None)
    if mode not in ("mean", ["mean"], ("mean",)):
        raise ValueError(f"cannot export pooling {mode!r}: only mean pooling is supported")


def _pooled(transformer: Any, inputs: list[str]) -> Any:
    """The transformer wrapped to return unit sentence vectors (built here: torch loads lazily)."""
    import torch

    class PooledModel(torch.nn.Module):
        """Transformer → mean over real tokens → unit length, as sentence-transformers computes it."""

        def __init__(self, transformer: Any, inputs: list[str]) -> None:
            super().__init__()
            self.transformer = transformer
            self.inputs = inputs

        def forward(self, *tensors: Any) -> Any:
            named = dict(zip(self.inputs, tensors, strict=True))
            hidden = self.transformer(**named).last_hidden_state
            mask = named["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    return PooledModel(transformer, inputs)


def optimize_bert(source: Path, target: Path, heads: int, hidden: int) -> None:
    """Fuse attention, GELU and layer norms (ORT's BERT optimizer; float32, same results)."""
    from onnxruntime.transformers import optimizer

    # The optimizer logs every pass at INFO from loggers of its own: hush them for the call.
    logging.disable(logging.WARNING)
    try:
        optimized = optimizer.optimize_model(
            str(source), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=0, use_gpu=False
        )
        optimized.save_model_to_file(str(target))
    finally:
        logging.disable(logging.NOTSET)
    fused = {op: count for op, count in optimized.get_fused_operator_statistics().items() if count}
    log.info("fused operators: %s", fused)


def _write_tokenizer(model_dir: Path, tokenizer: Any, staging: Path) -> None:
    source = model_dir / TOKENIZER
    if source.is_file():
        shutil.copyfile(source, staging / TOKENIZER)
        return
    with tempfile.TemporaryDirectory() as scratch:  # a fast tokenizer can always write its JSON
        tokenizer.save_pretrained(scratch)
        shutil.copyfile(Path(scratch) / TOKENIZER, staging / TOKENIZER)


@contextmanager
def staged(out_dir: Path) -> Iterator[Path]:
    """A private folder beside `out_dir` to write an export into: swapped in for `out_dir` when the
    block ends (its manifest written), removed if the block fails, so no half export is ever used."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        yield staging
        staging.chmod(0o755)  # mkdtemp makes it private; a Lambda image runs as another user
        _replace_dir(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _replace_dir(staging: Path, out_dir: Path) -> None:
    """Swap the finished export in; a concurrent exporter that finished first wins harmlessly."""
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old.{os.getpid()}")
        out_dir.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    try:
        staging.rename(out_dir)
    except OSError:
        if not (out_dir / MANIFEST).is_file():
            raise
        shutil.rmtree(staging, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    from memory_engine.adapters.local.minilm_embedder import packaged_model_dir

    parser = argparse.ArgumentParser(
        prog="python -m memory_engine.adapters.local.onnx_export", description=__doc__
    )
    parser.add_argument("--model-dir", type=Path, default=None, help="default: the packaged MiniLM")
    parser.add_argument("--out", type=Path, default=None, help="default: the local cache folder")
    parser.add_argument("--no-optimize", action="store_true", help="skip ORT's operator fusion")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    model_dir = args.model_dir or packaged_model_dir()
    out = export(model_dir, args.out or default_onnx_dir(model_dir), optimize=not args.no_optimize)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
