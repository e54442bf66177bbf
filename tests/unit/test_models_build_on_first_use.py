"""The core's pydantic models build their validators when first used, not at import (issue 46):
a function's cold import pays only for the models its route or job uses."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from memory_engine import settings

ROOT = Path(__file__).resolve().parents[2]
# Where the models a function imports are defined: its records, its API bodies, its settings.
# (extraction's output schemas load only when an extraction runs, never at a function's import.)
MODEL_PACKAGES = ("memory_engine.models", "memory_engine.ports")
CHECKED = (*MODEL_PACKAGES, "memory_engine.settings")


def _models() -> list[type[BaseModel]]:
    for package in MODEL_PACKAGES:
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."):
            importlib.import_module(info.name)
    found: list[type[BaseModel]] = []
    pending = list(BaseModel.__subclasses__())
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__.startswith(CHECKED):
            found.append(model)
    return found


def test_every_model_of_the_core_defers_its_build() -> None:
    # Given every pydantic model the core defines (records, API bodies, settings pieces)
    models = _models()
    assert settings.Settings in models and len(models) > 50

    # When their configuration is read
    eager = [
        f"{model.__module__}.{model.__qualname__}"
        for model in models
        if not model.model_config.get("defer_build")
    ]

    # Then none is built at class creation: each derives from models.base.Model or settings.Piece
    assert eager == []


PROBE = """
import json
import functions.health.handler
from memory_engine.models import api, bank
from memory_engine.models.api import HealthResponse
models = (HealthResponse, api.RetrieveResponse, bank.RetrieveMemoriesRequest)
before = {m.__name__: m.__pydantic_complete__ for m in models}
HealthResponse().model_dump()
print(json.dumps([before, HealthResponse.__pydantic_complete__]))
"""


def test_a_handlers_import_builds_no_model_and_its_first_use_builds_its_own() -> None:
    # Given a fresh process, as a function's cold start is
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}

    # When the health check's handler is imported and then its answer serialized
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=ROOT, capture_output=True, text=True)

    # Then no model (its own or another route's) was built by the import, and its own is built
    # by its first use
    assert done.returncode == 0, done.stderr[-2000:]
    before, built = json.loads(done.stdout.splitlines()[-1])
    assert before == {"HealthResponse": False, "RetrieveResponse": False, "RetrieveMemoriesRequest": False}
    assert built is True


ADAPTER_PROBE = """
import importlib, json, pkgutil
from pydantic import TypeAdapter
import functions.health.handler
adapters = {{}}
for package in {packages!r}:
    for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
        for name, value in vars(importlib.import_module(info.name)).items():
            if isinstance(value, TypeAdapter):
                adapters[info.name + "." + name] = value.pydantic_complete
print(json.dumps(adapters))
"""


def test_no_type_adapter_of_the_core_is_built_at_import() -> None:
    # Given a fresh process that imports a handler and every module of the models and ports
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}
    code = ADAPTER_PROBE.format(packages=MODEL_PACKAGES)

    # When the module-level TypeAdapters (timestamps, expiry times, jobs) are looked at
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)

    # Then none has built its validator yet: each builds on first use, as the models do
    assert done.returncode == 0, done.stderr[-2000:]
    adapters = json.loads(done.stdout.splitlines()[-1])
    assert len(adapters) >= 3
    assert {name: built for name, built in adapters.items() if built} == {}
