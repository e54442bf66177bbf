"""The local server's native extensions load in any order.

usearch 2.26.6's extension, loaded before onnxruntime, made onnxruntime's import crash the process
(SIGSEGV): the local server loads its index (usearch) before its first embedding (onnxruntime), so
every start with a graph died at the first retrieve, and no test in-process could see it (pytest
itself would die, or import them in the harmless order). Each order runs in a process of its own.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# What the local server imports natively: the graphs, the embedder's runtime, BM25, vectors.
EXTENSIONS = ("usearch.index", "onnxruntime", "tantivy", "numpy")


@pytest.mark.parametrize("first", EXTENSIONS)
def test_each_native_extension_loaded_first_lets_the_others_load(first: str) -> None:
    # Given one extension imported before the others
    order = [first, *(name for name in EXTENSIONS if name != first)]

    # When a fresh interpreter imports them in that order
    done = subprocess.run(
        [sys.executable, "-c", "; ".join(f"import {name}" for name in order)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    # Then it exits cleanly (a crash is a negative return code: the signal)
    assert done.returncode == 0, (
        f"importing {' then '.join(order)}: exit {done.returncode}\n{done.stderr[-2000:]}"
    )
