"""Composition by factory maps: one map per kind of adapter, from a setting's value to its builder.

A map's values are "module:function" references to builders `(settings, ...) -> adapter`. The
module, and the SDK or model stack it imports, loads the first time that value is chosen: a
function that never picks OpenSearch never imports it (mem0's `utils/factory.py`, typed).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from memory_engine.errors import Unavailable

T = TypeVar("T")


def load(reference: str) -> Callable[..., Any]:
    """The object a "module:name" reference names, its module imported on first use."""
    module, _, name = reference.partition(":")
    return cast(Callable[..., Any], getattr(importlib.import_module(module), name))


@dataclass(frozen=True)
class Factory(Generic[T]):
    """The builders of one kind of adapter, keyed by the value of the setting that chooses one."""

    kind: str  # what it builds, for the error message ("search index")
    setting: str  # the environment variable that chooses, for the error message
    builders: Mapping[str, str]
    # Choices another process builds (the local server's own index), with what to do instead.
    elsewhere: Mapping[str, str] = field(default_factory=dict)

    def create(self, choice: str, *args: Any) -> T:
        """The adapter `choice` names, built from `args` (the settings first)."""
        reference = self.builders.get(choice)
        if choice in self.elsewhere:
            raise Unavailable(self.elsewhere[choice])
        if reference is None:
            raise Unavailable(
                f"{self.setting}={choice!r} names no {self.kind} this process can build: "
                f"choose one of {', '.join(sorted(self.builders))}."
            )
        return cast(T, load(reference)(*args))
