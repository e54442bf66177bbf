"""One ONNX Runtime session on the CPU, set up the same way for every exported embedding graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def cpu_session(graph: Path, threads: int) -> Any:
    """An inference session over `graph` with `threads` threads per call (0: one per core).

    Raises ImportError without onnxruntime: each adapter says which extra installs it.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # No busy-waiting between ops: on a small shared machine spinning threads steal the cores
    # that the server's other requests and the worker need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
