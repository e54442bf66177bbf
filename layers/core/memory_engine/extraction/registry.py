"""The thread's character registry: canonical name → aliases, merged batch after batch.

An LLM calls one person "김민수", "민수" and "민수 씨" across a long thread; the registry
remembers which names belong together so every memory names them the same way. Pure functions:
the caller loads and saves the registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

Registry = dict[str, list[str]]

_SPACES = re.compile(r"\s+")
# What a model writes where a character has no alias: such words name nobody, so two characters
# "sharing" one are not one person (a batch once gave all 7 characters the alias "none").
_NO_NAME = frozenset(
    {
        "none",
        "no",
        "n/a",
        "na",
        "n.a.",
        "nil",
        "null",
        "nothing",
        "unknown",
        "not applicable",
        "no alias",
        "no aliases",
        "-",
        "--",
        "—",
        "–",
        "?",
        "...",
        "…",
        "_",
        "없음",
        "없다",
        "없어요",
        "없습니다",
        "해당 없음",
        "해당없음",
        "모름",
        "미상",
        "무",
    }
)


def name_key(name: str) -> str:
    """How names are compared: case, outer and repeated whitespace do not make a new name."""
    return _SPACES.sub(" ", name).strip().casefold()


def tidy(name: str) -> str:
    return _SPACES.sub(" ", name).strip()


def names_nobody(name: str) -> bool:
    """True for an empty name and for the words that stand for "no alias" ("none", "N/A", "없음", "-")."""
    key = name_key(name).strip("\"'()[]. ")
    return not key or key in _NO_NAME or name_key(name) in _NO_NAME


def _names(canonical: str, aliases: Iterable[str]) -> set[str]:
    return {name_key(name) for name in (canonical, *aliases) if not names_nobody(name)}


def _unique(names: Iterable[str], exclude: str) -> list[str]:
    seen = {name_key(exclude)}
    out: list[str] = []
    for name in names:
        clean = tidy(name)
        key = name_key(clean)
        if not names_nobody(clean) and key not in seen:
            seen.add(key)
            out.append(clean)
    return out


def update_registry(registry: Mapping[str, Sequence[str]], found: Mapping[str, Sequence[str]]) -> Registry:
    """Merge one batch's characters (`name → aliases`) into the registry and return a new one.

    - A found character any of whose names is a known canonical name or alias joins that entry:
      the known canonical name stays, the batch's other names become aliases.
    - A found character touching several entries merges them into the oldest one (registry order):
      overlapping alias sets describe one person.
    - Anything else is a new entry. Comparison ignores case and spacing; the input is not modified.
    - Names that name nobody ("", "none", "N/A", "없음", "-": `names_nobody`) are dropped: they
      never link two characters and are never stored as aliases.
    """
    result: Registry = {
        name: _unique(aliases, name) for name, aliases in registry.items() if not names_nobody(name)
    }
    for name, aliases in found.items():
        names = _names(name, aliases)
        if not names:
            continue
        touched = [canonical for canonical, known in result.items() if names & _names(canonical, known)]
        if not touched:
            # A nameless entry with aliases still names someone: its first alias leads.
            first, *rest = [tidy(n) for n in (name, *aliases) if not names_nobody(n)]
            result[first] = _unique(rest, first)
            continue
        keep, *absorbed = touched
        merged = list(result[keep])
        for other in absorbed:
            merged += [other, *result.pop(other)]
        result[keep] = _unique([*merged, name, *aliases], keep)
    return result


def canonical_index(registry: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """name_key of every canonical name and alias → its canonical name."""
    index: dict[str, str] = {}
    for canonical, aliases in registry.items():
        for key in _names(canonical, aliases):
            index.setdefault(key, canonical)
    return index


def canonical_name(name: str, index: Mapping[str, str]) -> str:
    """The registry's name for `name`, or `name` itself (tidied) when the registry does not know it."""
    return index.get(name_key(name), tidy(name))
