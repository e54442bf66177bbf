"""A deferred package initialiser binds each name on first use, exactly as the initialiser would,
and runs the whole initialiser for anything else (`memory_engine.edge.deferred_init`)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_engine.edge import deferred_init

ROOT = Path(__file__).resolve().parents[2]
INIT = '''
"""A package whose initialiser imports every part."""

from toypkg.parts import Part
from toypkg.costly import Costly as Renamed
from . import extras

__all__ = ["Part", "Renamed", "extras"]
'''
MODULES = {
    "parts.py": "class Part: ...\n",
    # Importing this one is what a deferred initialiser saves.
    "costly.py": "import sys\nsys.modules['toypkg_costly_ran'] = sys\nclass Costly: ...\n",
    "extras.py": "VALUE = 1\n",
    "unlisted.py": "VALUE = 2\n",
}


@pytest.fixture
def toy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    package = tmp_path / "toypkg"
    package.mkdir()
    (package / "__init__.py").write_text(INIT)
    for name, source in MODULES.items():
        (package / name).write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [m for m in sys.modules if m.startswith("toypkg")]:
        del sys.modules[name]
    for finder in sys.meta_path:
        if isinstance(finder, deferred_init._DeferringFinder):
            finder.packages.discard("toypkg")


def test_a_name_of_a_deferred_package_imports_only_the_module_that_defines_it(toy_package: Path) -> None:
    # Given a package whose initialiser imports a costly module, deferred
    deferred_init.defer("toypkg")

    # When one name is imported from it
    from toypkg import Part

    # Then only the module that defines that name was imported, and the name is that module's
    package = sys.modules["toypkg"]
    assert Part is sys.modules["toypkg.parts"].Part
    assert "toypkg.costly" not in sys.modules and "toypkg_costly_ran" not in sys.modules
    assert deferred_init.deferred(package)


def test_a_deferred_package_binds_renamed_names_and_submodules_as_its_initialiser_does(
    toy_package: Path,
) -> None:
    # Given the deferred package
    deferred_init.defer("toypkg")
    package = importlib.import_module("toypkg")

    # When a renamed name, a submodule the initialiser imports and one it does not are asked for
    renamed, extras = package.Renamed, package.extras
    from toypkg import unlisted

    # Then each is what the initialiser (or the import system) would have bound
    assert renamed is sys.modules["toypkg.costly"].Costly
    assert extras is sys.modules["toypkg.extras"] and unlisted is sys.modules["toypkg.unlisted"]
    assert deferred_init.deferred(package)  # none of them needed the initialiser to run


def test_a_name_the_initialiser_binds_otherwise_runs_the_whole_initialiser(toy_package: Path) -> None:
    # Given the deferred package, not yet initialised
    deferred_init.defer("toypkg")
    package = importlib.import_module("toypkg")

    # When a name its imports do not bind is asked for (`__all__`), then one nobody binds
    names = package.__all__

    # Then the initialiser ran as usual, once, and an unknown name is still an AttributeError
    assert names == ["Part", "Renamed", "extras"]
    assert "toypkg_costly_ran" in sys.modules and not deferred_init.deferred(package)
    with pytest.raises(AttributeError, match="no attribute 'Missing'"):
        package.Missing  # noqa: B018


def test_an_initialiser_that_does_more_than_import_names_runs_as_usual(toy_package: Path) -> None:
    # Given a package whose initialiser also calls something at import
    (toy_package / "__init__.py").write_text(INIT + "\nlen(__all__)\n")
    deferred_init.defer("toypkg")

    # When the package is imported
    package = importlib.import_module("toypkg")

    # Then its initialiser ran in full: deferring it could skip the call
    assert "toypkg_costly_ran" in sys.modules and not deferred_init.deferred(package)


POWERTOOLS_PROBE = """
import ast, importlib, json, sys
from pathlib import Path
from memory_engine.edge.deferred_init import defer
packages = ["aws_lambda_powertools.event_handler", "aws_lambda_powertools.utilities.data_classes"]
defer(*packages)
report = {}
for name in packages:
    package = importlib.import_module(name)
    names = [n for n in ast.literal_eval(
        next(node.value for node in ast.parse(Path(package.__file__).read_text()).body
             if isinstance(node, ast.Assign) and node.targets[0].id == "__all__"))]
    resolved = {n: getattr(package, n) for n in names}  # each through the deferred package
    package.__all__  # the initialiser now runs in full and rebinds every name
    report[name] = [n for n in names if vars(package)[n] is not resolved[n]]
print(json.dumps(report))
"""


def test_powertools_deferred_packages_bind_every_exported_name_to_the_same_object() -> None:
    # Given Powertools' two deferred packages, in a fresh interpreter
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}

    # When every name each exports is resolved name by name, then the initialiser runs in full
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(POWERTOOLS_PROBE)], env=env, capture_output=True, text=True
    )

    # Then the full initialiser bound every name to the object already resolved
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {
        "aws_lambda_powertools.event_handler": [],
        "aws_lambda_powertools.utilities.data_classes": [],
    }
