"""The package as a user installs it: console scripts run from a folder outside the repository.

The project is installed (no dependencies: they come from the venv) into a fresh target folder
from a copy of the files a wheel is built from, then `memory-engine` runs with that folder first
on its path and an empty working directory, so neither the checkout nor an editable install can
stand in for a package the wheel forgot (the route table and handlers once were).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "layers/core", "functions", "memory_engine_app")


@dataclass(frozen=True)
class Installed:
    site: Path
    outside: Path  # an empty working directory, not under the repository

    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.site), "MEMORY_ENGINE_DATA_DIR": str(self.outside)}

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.site / "bin" / "memory-engine"), *args],
            cwd=self.outside,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    site = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run(
        [*pip, "--target", str(site), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return Installed(site, tmp_path_factory.mktemp("outside"))


def test_the_installed_packages_are_the_ones_imported(installed: Installed) -> None:
    probe = "import functions.routes, memory_engine, memory_engine_app; print(functions.routes.__file__)"
    located = subprocess.run(
        [sys.executable, "-c", probe + "; print(memory_engine.__file__); print(memory_engine_app.__file__)"],
        cwd=installed.outside,
        env=installed.env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()

    assert len(located) == 3
    # The doors are a distribution of their own (clients/python): not in the server's
    assert not (installed.site / "memory_engine_client").exists()
    assert all(Path(path).is_relative_to(installed.site) for path in located), located


def test_the_console_script_answers_help_outside_the_repository(installed: Installed) -> None:
    done = installed.run("--help")

    assert done.returncode == 0, done.stderr
    assert all(command in done.stdout for command in ("openapi", "serve", "mcp", "smoke"))


def test_the_console_script_writes_the_openapi_document_outside_the_repository(installed: Installed) -> None:
    out = installed.outside / "openapi.json"

    done = installed.run("openapi", "--out", str(out))

    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert "/v1/engine/retrieve/" in document["paths"]
    assert document == json.loads((ROOT / "docs" / "openapi.json").read_text())


def test_the_installed_package_serves_the_inspector_page(installed: Installed) -> None:
    probe = (
        "from memory_engine_app.server.inspector_assets import inspector_asset as a; "
        "print([a('/inspector/' + n)[0] for n in ('', 'inspector.js', 'inspector.css')])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=installed.outside,
        env=installed.env(),
        capture_output=True,
        text=True,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[200, 200, 200]"
