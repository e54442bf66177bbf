"""Request bodies that take values as sent and refuse fields they do not know, naming each one.

A field the engine does not read was, before this, dropped without a word: a memory-bank request
written in Google's REST style (`similaritySearchParams`) returned the whole scope, and
`forceSummary` did nothing. Now an unknown field is a 422 that names it and, when it is another
spelling of a known field (camelCase for snake_case, other letter case), says which.

Values are not coerced either (`StrictTypes`, the base of every request body, the chat request's
included): `true` is not the number 1, `"5"` is not 5, `1` or `"yes"` is not `true`. pydantic's
lax mode read `max_tokens: true` as a budget of one token and answered 200 with nothing; now each
is a 422 naming the field. A field that must read more than one JSON type (a timestamp: a number or
an ISO 8601 string) says so with its own validator.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    AliasChoices,
    ConfigDict,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from memory_engine.models.base import Model


def _folded(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def unknown_field_message(name: str, known: list[str]) -> str:
    """What the 422 says of one unknown field: its right spelling when it has one."""
    matches = [field for field in known if _folded(field) == _folded(name)]
    if matches:
        return f"is not a field here; did you mean '{matches[0]}'?"
    return "is not a field here: remove it (known fields: " + ", ".join(known) + ")"


class StrictTypes(Model):
    """A request model whose values must already have their field's JSON type (no coercion).

    A field it knows sent as `null` is a field not given, on every route (docs/api.md): it takes
    its default, or is reported missing ("is required") where it has none. Before, `null` was
    "not given" only where a field happened to be optional (`timestamp`, `npc_id`) and a type
    error elsewhere (`user_name`, `options`). Fields it does not know keep their `null` (the chat
    route passes them upstream as sent).
    """

    model_config = ConfigDict(strict=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_not_given(cls, data: Any) -> Any:
        if not isinstance(data, dict) or None not in data.values():
            return data
        known = set(cls.accepted_names())
        return {key: value for key, value in data.items() if value is not None or key not in known}

    @classmethod
    def accepted_names(cls) -> list[str]:
        """The names a client may send: field names, and aliases where the model has them."""
        names: list[str] = []
        for name, info in cls.model_fields.items():
            alias = info.validation_alias or info.alias or name
            choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
            names.extend(choice for choice in choices if isinstance(choice, str))
        return list(dict.fromkeys(names))


class StrictBody(StrictTypes):
    """A request body (or part of one): unknown fields are validation errors naming the field."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    @model_validator(mode="wrap")
    @classmethod
    def _name_unknown_fields(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(data)
        except ValidationError as error:
            # Errors of nested bodies were rewritten by their own validator; only the ones about
            # this level's extra keys change here, the rest are carried over as they are.
            raise ValidationError.from_exception_data(
                error.title, [_carried(detail, cls.accepted_names()) for detail in error.errors()]
            ) from None


def _carried(detail: Any, known: list[str]) -> InitErrorDetails:
    message = detail["msg"]
    if detail["type"] == "extra_forbidden" and len(detail["loc"]) == 1:
        message = unknown_field_message(str(detail["loc"][0]), known)
    # "{message}" keeps braces in the text from being read as a template; the type stays the same,
    # so the HTTP layer still tells "missing" and the rest apart.
    return InitErrorDetails(
        type=PydanticCustomError(detail["type"], "{message}", {"message": message}),
        loc=detail["loc"],
        input=detail.get("input"),
    )
