"""The core's import graph by room: how many modules, rooms, floors and edges, and which edges
run upward (two rooms that import each other, straight or round a loop).

A room is a child of `memory_engine`: a module, or a package with all it holds. A room's
floor is one more than the highest floor it imports (the ground is 1); the rooms of a loop
share a floor, and the edges inside a loop are the upward ones. Lazy imports and imports for
type checking count, as they do for the import-linter contracts.

    python -m bench.import_graph    (docs/research/house.md quotes it before and after the split)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import grimp

PACKAGE = "memory_engine"


@dataclass(frozen=True)
class House:
    modules: int
    floors: dict[str, int]  # room -> floor
    edges: frozenset[tuple[str, str]]
    upward: tuple[tuple[str, str], ...]


def room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _loops(rooms: list[str], out: dict[str, set[str]]) -> dict[str, int]:
    """Each room's strongly connected component (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    component: dict[str, int] = {}
    for start in rooms:
        if start in index:
            continue
        work = [(start, iter(sorted(out[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            room, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(out[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[room] = min(low[room], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[room])
            if low[room] == index[room]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = index[room]
                    if member == room:
                        break
    return component


def measure() -> House:
    graph = grimp.build_graph(PACKAGE, include_external_packages=False, cache_dir=None)
    modules = [m for m in graph.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]
    edges: set[tuple[str, str]] = set()
    rooms = sorted({r for m in modules if (r := room_of(m))})
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = room_of(module), room_of(imported)
            if a and b and a != b:
                edges.add((a, b))
    out: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        out[a].add(b)
    component = _loops(rooms, out)
    floors: dict[str, int] = {}
    for room in sorted(rooms, key=lambda r: len(out[r])):  # a memoized walk down, loops flattened
        _floor(room, out, component, floors)
    upward = tuple(sorted((a, b) for a, b in edges if component[a] == component[b]))
    return House(len(modules), floors, frozenset(edges), upward)


def _floor(room: str, out: dict[str, set[str]], component: dict[str, int], floors: dict[str, int]) -> int:
    if room not in floors:
        loop = [r for r in component if component[r] == component[room]]
        below = {b for r in loop for b in out[r] if component[b] != component[room]}
        floor = 1 + max((_floor(b, out, component, floors) for b in below), default=0)
        for r in loop:
            floors[r] = floor
    return floors[room]


def main() -> None:
    house = measure()
    print(
        f"modules {house.modules} | rooms {len(house.floors)} | floors {max(house.floors.values())} | "
        f"edges {len(house.edges)} | upward {len(house.upward)}"
    )
    for floor in sorted(set(house.floors.values()), reverse=True):
        print(f"floor {floor}: " + ", ".join(sorted(r for r, f in house.floors.items() if f == floor)))
    for a, b in house.upward:
        print(f"upward: {a} -> {b}")


if __name__ == "__main__":
    main()
