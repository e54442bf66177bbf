"""The base of the core's pydantic models: each builds its validator when first used, not at import.

pydantic builds a model's validator and serializer when its class is created. A function's import
loads every model of the modules it imports (a handler's route uses one or two of them), and that
building was about a tenth of a handler's cold import (issue 46). With `defer_build` a model is
built on its first validation, serialization or schema, so a function pays only for the models
its route or job uses, and pays for them once, on its first request.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A pydantic model built on first use (its subclasses' own `model_config` is merged in)."""

    model_config = ConfigDict(defer_build=True)
