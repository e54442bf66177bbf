"""Package initialisers that import only what a caller names.

Powertools' `aws_lambda_powertools.event_handler/__init__.py` imports every resolver it has
(AppSync, AppSync events, Bedrock agents, VPC Lattice, function URLs, the ASGI one) and
`utilities/data_classes/__init__.py` imports the event classes of some forty event sources. A
function serves one REST route or reads one queue: importing any submodule runs its package's
initialiser first, so each cold start paid for all of them (46 modules, 7–13 ms of CPU of a
route's ~200 ms import; issue 46, docs/research/speed.md).

`defer(...)` changes how the named packages are initialised, nothing else: when one is first
imported its module is created with its `__path__` (so its submodules import as usual) and, in
place of running `__init__.py`, a module `__getattr__` (PEP 562) that resolves a name the way the
initialiser would have bound it — by importing the submodule its `from ... import` statement
names — on first use. `from aws_lambda_powertools.event_handler import Response` then imports
`api_gateway` alone. Anything the initialiser's source does that is not such an import (or a name
it does not bind that way, `__all__` included) runs the whole initialiser, as if nothing were
deferred; so does a package already imported before `defer`.
"""

from __future__ import annotations

import ast
import importlib
import sys
import threading
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import resolve_name
from pathlib import Path
from types import ModuleType
from typing import Any

# The statements an initialiser may hold for its run to be deferred: name bindings from imports,
# its docstring, its `__all__`.
_HARMLESS = (ast.ImportFrom, ast.Expr, ast.Assign, ast.AnnAssign)


def defer(*packages: str) -> None:
    """Initialise these packages name by name, on first use (idempotent)."""
    finder = next((f for f in sys.meta_path if isinstance(f, _DeferringFinder)), None)
    if finder is None:
        finder = _DeferringFinder()
        sys.meta_path.insert(0, finder)
    finder.packages.update(packages)


def deferred(module: ModuleType) -> bool:
    """Whether a package's initialiser has not run (a name it binds is resolved on first use)."""
    loader = getattr(module.__spec__, "loader", None)
    return isinstance(loader, _DeferredInit) and not loader.initialised


class _DeferringFinder(MetaPathFinder):
    def __init__(self) -> None:
        self.packages: set[str] = set()

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in self.packages:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if (
            spec is None
            or spec.loader is None
            or spec.origin is None
            or spec.submodule_search_locations is None
        ):
            return spec
        bindings = _import_bindings(fullname, Path(spec.origin))
        if bindings is not None:
            spec.loader = _DeferredInit(spec.loader, bindings)
        return spec


class _DeferredInit(Loader):
    """Creates the package without running its initialiser; binds names as they are asked for."""

    def __init__(self, real: Loader, bindings: dict[str, tuple[str, str]]) -> None:
        self.real = real
        self.bindings = bindings
        self.initialised = False
        # Threads of the local server may ask for names at once. Only running the initialiser is
        # guarded: a name's import goes through the import system's own locks, and holding ours
        # across it could deadlock with a thread importing a submodule.
        self._lock = threading.RLock()

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return None  # the default module, with the spec's __path__

    def exec_module(self, module: ModuleType) -> None:
        def __getattr__(name: str) -> Any:  # PEP 562: asked for a name the module lacks
            return self._resolve(module, name)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]

    def _resolve(self, module: ModuleType, name: str) -> Any:
        if name in self.bindings:
            source, original = self.bindings[name]
            value = (
                importlib.import_module(source)
                if not original
                else getattr(importlib.import_module(source), original)
            )
            setattr(module, name, value)
            return value
        if name.startswith("__") and name != "__all__":
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        if name.isidentifier() and PathFinder.find_spec(f"{module.__name__}.{name}", module.__path__):
            # A submodule the initialiser does not import (`from package import submodule`).
            return importlib.import_module(f"{module.__name__}.{name}")
        with self._lock:
            if not self.initialised:
                # A name the initialiser binds some other way: run it, as if nothing were deferred.
                self.initialised = True
                self.real.exec_module(module)
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None


def _import_bindings(package: str, init: Path) -> dict[str, tuple[str, str]] | None:
    """Each name the initialiser binds with `from X import Y [as Z]`: Z -> (X, Y), or (X.Y, "") for
    a submodule of the package itself. None when the initialiser does anything else (calls,
    conditionals, star imports): it then runs as usual."""
    try:
        tree = ast.parse(init.read_bytes(), str(init))
    except (OSError, SyntaxError):
        return None
    bindings: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not isinstance(node, _HARMLESS):
            return None
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
            return None
        if isinstance(node, ast.Assign | ast.AnnAssign) and not _is_dunder_all(node):
            return None
        if isinstance(node, ast.ImportFrom):
            source = (
                resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module
            )
            for alias in node.names:
                if alias.name == "*" or source is None:
                    return None
                if source == package:  # `from . import submodule`: the submodule itself
                    bindings[alias.asname or alias.name] = (f"{package}.{alias.name}", "")
                else:
                    bindings[alias.asname or alias.name] = (source, alias.name)
    return bindings


def _is_dunder_all(node: ast.Assign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return all(isinstance(target, ast.Name) and target.id == "__all__" for target in targets)
