"""The Lambda core (layers/core/memory_engine, shipped as the layer) points inward only.

It never imports the outer ring (the route table and handlers in `functions/`, the local server
and CLI in `memory_engine_app/`, the CDK app, benchmarks or tests), not even lazily or by name
through importlib, and its modules import one another without a cycle. Read from the source with
`ast`, so a lazy import inside a function body counts as much as one at the top.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "layers" / "core"
OUTER = ("functions", "memory_engine_app", "infra", "bench", "tests")


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted((CORE / "memory_engine").rglob("*.py")):
        parts = path.relative_to(CORE).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    assert "memory_engine.composition.wiring" in found, f"the core is not under {CORE}"
    return found


def imported_names(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import in the module, and of every string naming a module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base] if base else parents)
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value  # importlib.import_module("functions.x.handler")


def is_outer(name: str) -> bool:
    return any(name == outer or name.startswith(f"{outer}.") for outer in OUTER)


def test_the_core_never_imports_the_outer_ring() -> None:
    offending = [
        f"{path.relative_to(CORE)}:{line} imports {name}"
        for module, path in modules().items()
        for line, name in imported_names(module, path)
        if is_outer(name)
    ]

    assert offending == [], "the Lambda layer does not ship these packages:\n" + "\n".join(offending)


def test_core_modules_import_one_another_without_a_cycle() -> None:
    known = modules()
    graph: dict[str, set[str]] = {module: set() for module in known}
    for module, path in known.items():
        for _, name in imported_names(module, path):
            while name and name not in known:
                name = name.rpartition(".")[0]
            # A package's own __init__ is imported with any of its modules: not an edge.
            if name and name != module and not module.startswith(f"{name}."):
                graph[module].add(name)

    cycles = _cycles(graph)

    assert cycles == [], f"import cycles in the core: {cycles}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_undoing_of_supersession_is_a_module_that_imports_neither_side_that_uses_it() -> None:
    # Given the core's modules, read from source
    known = modules()
    undoing = "memory_engine.usecases.fact_reopening"
    users = ("memory_engine.usecases.supersede", "memory_engine.usecases.removed_facts")

    # When the reopening module's imports, and the functions supersession defines, are read
    imports = {name for _, name in imported_names(undoing, known[undoing])}
    tree = ast.parse(known[users[0]].read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}

    # Then it imports neither supersession nor the deletes' module (even lazily), and supersession
    # no longer holds the undoing side itself
    assert not {name for name in imports for user in users if name == user or name.startswith(f"{user}.")}
    assert not defined & {"forget", "reopen", "unname", "named", "_Standing", "_reopened"}
