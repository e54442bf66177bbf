"""IAM's evaluation of identity policies, for what the functions' roles hold, beside the resource
policies the stack puts on its queues, topic and key: Allow and Deny statements, `Action`/
`Resource` with `*` and `?` wildcards, `Principal`, and the condition operators the synthesized
policies use (an operator not known here raises, so a new one is noticed, never silently passed).

moto's own evaluation treats every resource as `*` for most services (a role naming its table
would be denied everything) and ignores the actions inside a DynamoDB transaction; this one is
handed the resources and actions AWS would authorize (see `requests.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class Authorization:
    """One action on one resource, as AWS authorizes it, with the request's condition keys."""

    action: str
    resource: str
    context: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.action} on {self.resource}"


@lru_cache(maxsize=4096)
def _pattern(text: str, ignore_case: bool) -> re.Pattern[str]:
    parts = ("." if char == "?" else ".*" if char == "*" else re.escape(char) for char in text)
    return re.compile("".join(parts), re.IGNORECASE if ignore_case else 0)


def matches(pattern: str, value: str, ignore_case: bool = False) -> bool:
    return _pattern(pattern, ignore_case).fullmatch(value) is not None


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


_OPERATORS = {
    "StringEquals": lambda expected, actual: expected == actual,
    "StringLike": lambda expected, actual: matches(expected, actual),
    "ArnEquals": lambda expected, actual: expected == actual,
    "ArnLike": lambda expected, actual: matches(expected, actual),
    "Bool": lambda expected, actual: expected.lower() == actual.lower(),
}


def _condition_holds(operator: str, key: str, expected: Sequence[str], context: Mapping[str, Any]) -> bool:
    qualifier, _, name = operator.rpartition(":")
    if name not in _OPERATORS:
        raise NotImplementedError(f"condition operator {operator} is not evaluated by the replay")
    test = _OPERATORS[name]
    values = list(context.get(key, []))

    def one(actual: str) -> bool:
        return any(test(str(wanted), actual) for wanted in expected)

    if qualifier == "ForAllValues":
        return all(one(actual) for actual in values)  # no value at all: true, as in IAM
    if qualifier == "ForAnyValue":
        return any(one(actual) for actual in values)
    if qualifier:
        raise NotImplementedError(f"condition qualifier {qualifier} is not evaluated by the replay")
    return len(values) == 1 and one(values[0])


def _applies(statement: Mapping[str, Any], request: Authorization) -> bool:
    if not any(matches(str(a), request.action, ignore_case=True) for a in _listed(statement["Action"])):
        return False
    if not any(isinstance(r, str) and matches(r, request.resource) for r in _listed(statement["Resource"])):
        return False
    conditions: Mapping[str, Mapping[str, Any]] = statement.get("Condition", {})
    return all(
        _condition_holds(operator, key, _listed(expected), request.context)
        for operator, pairs in conditions.items()
        for key, expected in pairs.items()
    )


def allowed(statements: Iterable[Mapping[str, Any]], request: Authorization) -> bool:
    """IAM's answer for identity policies: an explicit Deny wins, then any Allow, else denied."""
    found = [statement for statement in statements if _applies(statement, request)]
    if any(statement["Effect"] == "Deny" for statement in found):
        return False
    return any(statement["Effect"] == "Allow" for statement in found)


@dataclass(frozen=True)
class Principal:
    """Who asks: an IAM role (`kind` "AWS", its ARN) or an AWS service ("Service", its name)."""

    kind: str
    name: str
    account: str = ""


def _names(principal: Principal, statement: Mapping[str, Any]) -> bool:
    named = statement.get("Principal")
    if named == "*":
        return True
    if not isinstance(named, Mapping):
        return False
    wanted = _listed(named.get(principal.kind, []))
    # The account's root named in a resource policy delegates to the account's IAM policies: it
    # allows no role by itself (a KMS key's "let IAM decide" statement, `_root_delegates`).
    return any(who in ("*", principal.name) for who in wanted)


def _root_delegates(
    resource_statements: Iterable[Mapping[str, Any]], principal: Principal, request: Authorization
) -> bool:
    """Whether a key policy lets the account's IAM policies decide (its root allowed the action)."""
    root = Principal("AWS", f"arn:aws:iam::{principal.account}:root", principal.account)
    return any(
        statement["Effect"] == "Allow" and _names(root, statement) and _applies(statement, request)
        for statement in resource_statements
    )


def evaluate(
    identity: Iterable[Mapping[str, Any]],
    resource: Iterable[Mapping[str, Any]],
    principal: Principal,
    request: Authorization,
) -> bool:
    """IAM's answer within one account: an explicit Deny in the identity or the resource policy
    wins; then an Allow in either. A KMS key is the exception: its key policy must allow the
    principal, or let IAM policies decide (allowing the account's root), for an identity Allow to
    count."""
    identity, resource = list(identity), list(resource)
    mine = [
        statement for statement in resource if _names(principal, statement) and _applies(statement, request)
    ]
    if any(statement["Effect"] == "Deny" for statement in mine):
        return False
    if any(s["Effect"] == "Deny" for s in identity if _applies(s, request)):
        return False
    if any(statement["Effect"] == "Allow" for statement in mine):
        return True
    if request.action.lower().startswith("kms:") and not _root_delegates(resource, principal, request):
        return False
    return principal.kind == "AWS" and allowed(identity, request)
