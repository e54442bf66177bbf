"""What the docs show agrees with the code: the README's Python example runs as written (every
name it uses is defined in it), and operations.md's re-queue points are the ones `job_due` gives."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

from memory_engine.extraction.batching import extraction_point, job_due
from memory_engine.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_each_readme_python_example_defines_every_name_it_uses() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    assert blocks
    for block in blocks:
        assert _undefined(block) == set(), block


def _undefined(block: str) -> set[str]:
    tree = ast.parse(block)

    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            defined |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
    used = {
        node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    return used - defined


def test_operations_names_the_buffer_sizes_at_which_a_new_turn_queues_again() -> None:
    settings = Settings()
    point = extraction_point(settings.extraction_threshold, settings.batch_size)
    again = [n for n in range(point + 1, 70) if job_due(True, n, point, settings.batch_size)]

    text = " ".join((ROOT / "docs" / "operations.md").read_text().split())
    assert f"at {again[0]}, {again[1]}, {again[2]}, … buffered turns" in text
