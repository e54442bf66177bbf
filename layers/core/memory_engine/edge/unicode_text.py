"""Text that is not Unicode text: refused where a request is read, once, for every route.

JSON may spell a UTF-16 surrogate on its own (`"\\ud800"`, or a pair written backwards,
`"\\ude00\\ud83d"`). Python decodes such an escape into a `str` that cannot be encoded as UTF-8,
so the text passes every validator that only looks at its length and then fails wherever it is
encoded: a tokenizer, a hash of a scope, a database driver, the request to the chat model. Each
of those failures was a 500 that invited a retry failing the same way. The body parser
(`http.parse_json_body`) and the Lambda entry point (for the path, query string and headers) ask
this module instead, before any route runs, and a request holding such text is a 422 naming every
place it was found (its JSON path), never a crash further on.

A well-formed pair (`"\\ud83d\\ude00"`) is one character, 😀, and is accepted like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from memory_engine.errors import InvalidInput

# A surrogate, as a JSON escape in the raw text or as a character already decoded: text without
# either cannot hold one, so the common request is checked with one scan and no walk.
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Fields named in the message, and in the answer's errors: a body of thousands of bad strings
# gets an answer of bounded size.
_NAMED_IN_MESSAGE = 5
_NAMED_IN_ERRORS = 50
PAIRS = "a \\u escape of a surrogate comes only in a pair, high then low (\\ud83d\\ude00 is 😀)"


def printable(text: str) -> str:
    """`text` with each surrogate written as its escape (`\\ud800`), so it can be shown and sent."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def problem(text: str) -> str | None:
    """What is wrong with `text` (None when it is Unicode text): the first lone surrogate and where."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    where = f"\\u{ord(found.group()):04x} at character {found.start()}"
    return f"holds a lone surrogate ({where}), which is not text"


def unencodable_fields(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(JSON path, problem) of every string in a parsed JSON value, and every object key, that is
    not Unicode text, in document order. Paths are dotted like the validation errors'
    (`new_dialog.query`, `messages.1.content`, `scope.user_id`); a bad key is named by itself."""
    return list(_walk(value, prefix))


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    pending: list[tuple[Any, str]] = [(value, path)]
    while pending:
        item, where = pending.pop()
        if isinstance(item, str):
            if (wrong := problem(item)) is not None:
                yield where or "body", wrong
        elif isinstance(item, Mapping):
            children: list[tuple[Any, str]] = []
            for key, child in item.items():
                name = _join(where, printable(str(key)))
                if isinstance(key, str) and (wrong := problem(key)) is not None:
                    yield name, f"the key itself {wrong}"
                children.append((child, name))
            pending.extend(reversed(children))
        elif isinstance(item, list):
            pending.extend((child, _join(where, str(n))) for n, child in reversed(list(enumerate(item))))


def _join(path: str, part: str) -> str:
    return f"{path}.{part}" if path else part


def check_json(raw: str, value: Any) -> None:
    """Raise InvalidInput (422) naming every field of the parsed body `value` that is not
    Unicode text; `raw` is the text it was parsed from (a scan of it spares the walk)."""
    if _MAYBE_SURROGATE.search(raw) is None:
        return
    refuse(unencodable_fields(value))


def check_request(event: Mapping[str, Any]) -> None:
    """Raise InvalidInput (422) when the path, a path parameter, the query string or a header of
    an API Gateway proxy event is not Unicode text (the body is the parser's: `check_json`)."""
    found: dict[str, str] = {}
    for name, single, multi in (
        ("path", event.get("pathParameters"), None),
        ("query", event.get("queryStringParameters"), event.get("multiValueQueryStringParameters")),
        ("headers", event.get("headers"), event.get("multiValueHeaders")),
    ):
        for field, wrong in unencodable_fields(single, name):
            found.setdefault(field, wrong)
        for field, wrong in unencodable_fields(multi, name):
            # A value of a multi-value parameter or header is named like its single-value self.
            head, _, last = field.rpartition(".")
            found.setdefault(head if last.isdigit() else field, wrong)
    if not any(field.startswith("path.") for field in found):  # else the parameter names it
        found.update(unencodable_fields(event.get("path"), "path"))
    refuse(list(found.items()))


def refuse(fields: list[tuple[str, str]]) -> None:
    if not fields:
        return
    named = "; ".join(f"{field}: {wrong}" for field, wrong in fields[:_NAMED_IN_MESSAGE])
    more = len(fields) - _NAMED_IN_MESSAGE
    if more > 0:
        named += f"; and {more} more"
    raise InvalidInput(
        f"Invalid request: {named}. Send each of these fields as UTF-8 text: {PAIRS}.",
        [
            {"field": field, "message": f"{wrong}: send it as UTF-8 text; {PAIRS}"}
            for field, wrong in fields[:_NAMED_IN_ERRORS]
        ],
    )
