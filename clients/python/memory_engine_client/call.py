"""A call is data: method, path, body and how to read the answer. Each route's builder makes one
(memory_engine_client.native, .bank, .inspector), and the sync and async clients only send them,
so every route is written once for both.

A plan is a generator that yields calls (or a `Together` of calls that may run at once) and is
sent their results back: a helper made of several calls (a conversation sent in order, every page
of a scope, the LangGraph store's operations) is written once as a plan and run by either client.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ValidationError

from memory_engine_client.errors import FieldError, InvalidRequest

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request to the API and the reader of its JSON answer."""

    method: str
    path: str
    read: Callable[[Any], T]
    body: Any = None
    params: Mapping[str, str | int] = field(default_factory=dict)
    auth: bool = True


@dataclass(frozen=True)
class Together:
    """Calls with no order between them: the async client sends them at once, the sync one in turn;
    the plan is sent back the list of their results, in the same order."""

    calls: tuple[Call[Any], ...]


Plan = Generator["Call[Any] | Together", Any, T]


def body(model: type[BaseModel], **fields: Any) -> dict[str, Any]:
    """The JSON body of a request, checked against the API's own request model first, so a wrong
    argument fails here with the field named (as the API's 422 would) instead of a round trip.
    Arguments left as None are not sent: the API applies its defaults."""
    given = {name: value for name, value in fields.items() if value is not None}
    check_encodable(given)
    try:
        checked = model.model_validate(given)
    except ValidationError as error:
        raise invalid(error) from None
    dumped: dict[str, Any] = checked.model_dump(mode="json", exclude_unset=True)
    return dumped


def check_encodable(sent: Any) -> None:
    """Refuse, naming the fields, a body with text UTF-8 cannot encode (a lone surrogate such as
    "\\ud800": half of an emoji cut in two): the API could not read it, and httpx would fail with
    a bare encoding error."""
    paths = list(_unencodable(sent, ()))
    if not paths:
        return
    fields = [
        FieldError(field=".".join(map(str, p)) or "body", message="cannot be encoded as UTF-8") for p in paths
    ]
    raise InvalidRequest(
        f"Invalid request (not sent): {', '.join(item.field for item in fields)}: text that cannot be "
        "encoded as UTF-8 (a lone surrogate such as \\ud800, often half of an emoji cut in two): send "
        "the whole character or leave it out.",
        errors=fields,
    )


def path_part(value: str, field: str) -> str:
    """A value quoted for a URL path; text UTF-8 cannot encode is refused naming the argument."""
    check_encodable({field: value})
    return quote(value, safe="")


def _unencodable(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
    """The paths of the strings (keys included) that UTF-8 cannot encode."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            yield path
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _unencodable(key, path)
            yield from _unencodable(item, (*path, key))
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            yield from _unencodable(item, (*path, n))


def invalid(error: ValidationError) -> InvalidRequest:
    """A pydantic error as the API words its 422: every bad field by its dotted path."""
    fields = [
        FieldError(field=".".join(str(part) for part in item["loc"]) or "body", message=item["msg"])
        for item in error.errors()
    ]
    summary = "; ".join(f"{item.field}: {item.message}" for item in fields)
    return InvalidRequest(f"Invalid request (not sent): {summary}.", errors=fields)


def reader(model: type[M]) -> Callable[[Any], M]:
    """Reads an answer into the API's response model."""
    return model.model_validate


def raw(answer: Any) -> dict[str, Any]:
    """An answer kept as the JSON it is (routes whose body is another API's, such as chat)."""
    return dict(answer) if isinstance(answer, Mapping) else {"value": answer}
