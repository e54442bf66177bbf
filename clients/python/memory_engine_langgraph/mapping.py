"""How LangGraph's store model maps onto the memory bank (docs/clients.md#langgraph-store).

The bank keeps facts (text, at most 4,000 characters) under flat string scopes it matches exactly,
names each memory itself and embeds its whole text. LangGraph wants items (a dict value under a
caller's key) in namespaces (tuples searched by prefix). So:
- a namespace ("users", "42") is the scope {"langgraph_namespace": "users.42"} (LangGraph forbids
  "." in labels, so the join is reversible);
- an item is one fact: first the text to embed (the value's string fields, or the fields `index`
  names), then one line of JSON with the key, the value and when the item was created. Its last
  version wins; the bank's createTime of that version is the item's updated_at;
- the namespaces in use are facts of one more scope, the registry, since the bank cannot list
  scopes by prefix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import Item, MatchCondition
from langgraph.store.base.embed import get_text_at_path

from memory_engine_client.models import BankMemory

# The memory bank's bounds (docs/api.md: a fact, a scope value).
MAX_FACT_CHARS = 4_000
MAX_SCOPE_VALUE_CHARS = 256
NAMESPACE_KEY = "langgraph_namespace"
REGISTRY = {"langgraph_registry": "namespaces"}
Namespace = tuple[str, ...]


def scope_of(namespace: Namespace) -> dict[str, str]:
    joined = ".".join(namespace)
    if len(joined) > MAX_SCOPE_VALUE_CHARS:
        raise ValueError(
            f"namespace {namespace!r} is {len(joined)} characters joined with '.'; "
            f"the memory bank's scope values hold at most {MAX_SCOPE_VALUE_CHARS}"
        )
    return {NAMESPACE_KEY: joined}


def registry_fact(namespace: Namespace) -> str:
    return json.dumps({NAMESPACE_KEY: list(namespace)}, ensure_ascii=False)


def registered(memories: Iterable[BankMemory]) -> set[Namespace]:
    """The namespaces the registry's facts name (a fact twice, from two writers at once, counts once)."""
    found: set[Namespace] = set()
    for memory in memories:
        try:
            labels = json.loads(memory.fact).get(NAMESPACE_KEY)
        except (ValueError, AttributeError):
            continue
        if isinstance(labels, list) and labels and all(isinstance(label, str) for label in labels):
            found.add(tuple(labels))
    return found


def fact_of(key: str, value: Mapping[str, Any], created_at: str, fields: Sequence[str] | None) -> str:
    """The fact that stores an item: the text to embed, then its JSON line (the text is left out
    when both would not fit; the JSON alone must)."""
    try:
        record = json.dumps({"key": key, "value": value, "created_at": created_at}, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"the value of {key!r} must be JSON: {error}") from None
    if len(record) > MAX_FACT_CHARS:
        raise ValueError(
            f"the item {key!r} is {len(record)} characters as JSON; the memory bank holds facts of at "
            f"most {MAX_FACT_CHARS}: store a smaller value (or a reference to it)"
        )
    text = search_text(value, fields)
    if text and len(text) + 1 + len(record) <= MAX_FACT_CHARS:
        return f"{text}\n{record}"
    return record


def search_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """What the bank embeds for an item: the named fields (LangGraph's path syntax), or every
    string in the value."""
    if fields is None:
        return "\n".join(_strings(value))
    return "\n".join(text for path in fields for text in get_text_at_path(value, path))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def item_of(memory: BankMemory, namespace: Namespace) -> Item | None:
    """The item a fact stores; None for a fact this store did not write."""
    try:
        record = json.loads(memory.fact.rsplit("\n", 1)[-1])
        updated = datetime.fromisoformat(memory.updateTime.replace("Z", "+00:00"))
        created = datetime.fromisoformat(record["created_at"]) if record.get("created_at") else updated
        key, value = record["key"], record["value"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(key, str) or not isinstance(value, dict):
        return None
    return Item(value=value, key=key, namespace=namespace, created_at=created, updated_at=updated)


def versions(memories: Iterable[BankMemory], namespace: Namespace) -> dict[str, list[tuple[Item, str]]]:
    """Each key's stored versions (item, memory name), newest first."""
    found: dict[str, list[tuple[Item, str]]] = {}
    for memory in memories:
        item = item_of(memory, namespace)
        if item is not None:
            found.setdefault(item.key, []).append((item, memory.name))
    for listed in found.values():
        listed.sort(key=lambda pair: (pair[0].updated_at, pair[1]), reverse=True)
    return found


def matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: every key equal (nested dicts and lists compared whole), or compared
    with $eq, $ne, $gt, $gte, $lt, $lte."""
    return not wanted or all(_compare(value.get(key), expected) for key, expected in wanted.items())


def _compare(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping):
        if any(str(key).startswith("$") for key in expected):
            return all(_operator(actual, op, operand) for op, operand in expected.items())
        return isinstance(actual, Mapping) and all(_compare(actual.get(k), v) for k, v in expected.items())
    if isinstance(expected, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


def _operator(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    comparisons = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }
    if op not in comparisons:
        raise ValueError(f"unsupported filter operator {op!r} (use $eq, $ne, $gt, $gte, $lt, $lte)")
    try:
        return bool(comparisons[op](float(actual), float(operand)))
    except (TypeError, ValueError):
        return False


def namespace_matches(namespace: Namespace, condition: MatchCondition) -> bool:
    """A prefix or suffix condition, "*" matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    labels = (
        namespace[: len(path)]
        if condition.match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(want in ("*", have) for have, want in zip(labels, path, strict=True))
