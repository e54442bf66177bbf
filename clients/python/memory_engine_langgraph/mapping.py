"""How LangGraph's store model maps onto the memory bank (docs/clients.md#langgraph-store).

The bank keeps facts (text, at most 4,000 characters) under flat string scopes it matches exactly,
names each memory itself and embeds the whole text of each. LangGraph wants items (a dict value
under a caller's key) in namespaces (tuples searched by prefix), embedding only the texts its index
configuration names. So, per namespace ("users", "42"):
- the record scope {"langgraph_namespace": "users.42"} holds each item's record: its key, value
  and creation time as JSON, cut into parts when longer than a fact (LangGraph forbids "." in
  labels, so the join is reversible). Its embedding is never searched;
- the index scope {"langgraph_namespace": "users.42", "langgraph_index": "1"} holds the texts to
  rank by meaning, one fact per text (LangGraph's `index` fields, "$" being the whole value), the
  only facts a query searches; an item put with `index=False` has none;
- a put writes a new version (its index facts, then its record parts naming them), then deletes the
  old ones: a failure in between leaves two versions, and the newest complete one is read;
- the namespaces in use are facts of one more scope, the registry, since the bank cannot list
  scopes by prefix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import Item, MatchCondition
from langgraph.store.base.embed import get_text_at_path

from memory_engine_client.models import BankMemory

# The memory bank's bounds (docs/api.md §3): a fact, a scope value.
MAX_FACT_CHARS = 4_000
MAX_SCOPE_VALUE_CHARS = 256
NAMESPACE_KEY = "langgraph_namespace"
INDEX_KEY = "langgraph_index"
REGISTRY = {"langgraph_registry": "namespaces"}
# A value's JSON is cut into at most this many record parts: values up to ~150,000 characters
# (a fact holds 4,000 with its envelope), far past what an agent keeps per item; a larger one is
# refused, naming its size.
MAX_PARTS = 48
# An item is found by at most this many texts (one per indexed path and list element).
MAX_INDEX_TEXTS = 32
DEFAULT_FIELDS = ("$",)  # LangGraph's default: the whole value as JSON
Namespace = tuple[str, ...]


def scope_of(namespace: Namespace) -> dict[str, str]:
    """The record scope of a namespace."""
    joined = ".".join(namespace)
    if len(joined) > MAX_SCOPE_VALUE_CHARS:
        raise ValueError(
            f"namespace {namespace!r} is {len(joined)} characters joined with '.'; "
            f"the memory bank's scope values hold at most {MAX_SCOPE_VALUE_CHARS}"
        )
    return {NAMESPACE_KEY: joined}


def index_scope_of(namespace: Namespace) -> dict[str, str]:
    """The scope of a namespace's texts to search by meaning."""
    return {**scope_of(namespace), INDEX_KEY: "1"}


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


def index_texts(value: Mapping[str, Any], fields: Sequence[str] | None) -> list[str]:
    """The texts an item is found by: each text at each path (LangGraph's syntax; "$" the whole
    value as JSON), as LangGraph's own stores embed them, each cut to what a fact holds."""
    texts = [
        text[:MAX_FACT_CHARS]
        for path in (DEFAULT_FIELDS if fields is None else fields)
        for text in get_text_at_path(value, path)
        if isinstance(text, str) and text.strip()
    ]
    if len(texts) > MAX_INDEX_TEXTS:
        raise ValueError(
            f"the item is found by {len(texts)} texts; the store indexes at most {MAX_INDEX_TEXTS} per item: "
            "name fewer fields in `index`"
        )
    return texts


def record_facts(
    key: str, value: Mapping[str, Any], created_at: str, version: str, index: list[str]
) -> list[str]:
    """The facts of one version of an item: its JSON record in parts, the first naming its index facts."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"the value of {key!r} must be JSON: {error}") from None
    envelope = {"key": key, "version": version, "created_at": created_at}
    pieces: list[str] = []
    start = 0
    while start < len(text) or not pieces:
        size = 3_000  # shrunk below while its escaped JSON does not fit
        fact = ""
        while size > 0:
            fact = _record(
                {**envelope, "part": len(pieces), "index": index if not pieces else None},
                text[start : start + size],
            )
            if len(fact) <= MAX_FACT_CHARS - 40:  # room for the part count, added below
                break
            size = size * 3 // 4
        if size <= 0:
            raise ValueError(f"the key {key!r} is too long to store (at most about 1,000 characters)")
        pieces.append(text[start : start + size])
        start += size
        if len(pieces) > MAX_PARTS:
            raise ValueError(
                f"the item {key!r} is {len(text)} characters as JSON; the store holds at most about "
                f"{MAX_PARTS * 3_000:,} per item: store a smaller value (or a reference to it)"
            )
    return [
        _record({**envelope, "part": n, "parts": len(pieces), "index": index if n == 0 else None}, piece)
        for n, piece in enumerate(pieces)
    ]


def _record(fields: dict[str, Any], chunk: str) -> str:
    return json.dumps(
        {k: v for k, v in {**fields, "chunk": chunk}.items() if v is not None}, ensure_ascii=False
    )


@dataclass
class Version:
    """One stored version of an item: its record facts and index facts by name; `item` when complete."""

    key: str
    names: list[str] = field(default_factory=list)
    index: list[str] = field(default_factory=list)
    item: Item | None = None


def versions(memories: Iterable[BankMemory], namespace: Namespace) -> dict[str, list[Version]]:
    """Each key's stored versions, the complete ones newest first, then the incomplete ones (a put
    that failed half way: deleted with the rest on the next write of the key)."""
    parts: dict[tuple[str, str], dict[int, tuple[dict[str, Any], BankMemory]]] = {}
    found: dict[str, list[Version]] = {}
    for memory in memories:
        record = _read(memory.fact)
        if record is None:
            continue
        if "chunk" not in record:  # an item stored whole by an earlier version of this store
            item = _item(record["key"], record.get("value"), record.get("created_at"), memory, namespace)
            found.setdefault(record["key"], []).append(Version(record["key"], [memory.name], [], item))
            continue
        parts.setdefault((record["key"], record["version"]), {})[record["part"]] = (record, memory)
    for (key, _), pieces in parts.items():
        first = pieces.get(0)
        version = Version(key, [memory.name for _, memory in pieces.values()])
        if first is not None:
            version.index = [name for name in first[0].get("index") or [] if isinstance(name, str)]
            if len(pieces) == first[0].get("parts") and set(pieces) == set(range(len(pieces))):
                text = "".join(pieces[n][0]["chunk"] for n in range(len(pieces)))
                try:
                    value = json.loads(text)
                except ValueError:
                    value = None
                version.item = _item(key, value, first[0].get("created_at"), first[1], namespace)
        found.setdefault(key, []).append(version)
    for listed in found.values():
        listed.sort(key=_recency, reverse=True)
    return found


def _recency(version: Version) -> tuple[bool, float, list[str]]:
    stamp = version.item.updated_at.timestamp() if version.item is not None else 0.0
    return version.item is not None, stamp, version.names


def newest(listed: list[Version]) -> Item | None:
    return listed[0].item if listed and listed[0].item is not None else None


def _read(fact: str) -> dict[str, Any] | None:
    try:
        record = json.loads(fact.rsplit("\n", 1)[-1])
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("key"), str):
        return None
    if "chunk" in record:
        ok = isinstance(record.get("version"), str) and isinstance(record.get("part"), int)
        return record if ok and isinstance(record["chunk"], str) else None
    return record if isinstance(record.get("value"), dict) else None


def _item(key: str, value: Any, created: Any, memory: BankMemory, namespace: Namespace) -> Item | None:
    if not isinstance(value, dict):
        return None
    try:
        updated = datetime.fromisoformat(memory.updateTime.replace("Z", "+00:00"))
        made = datetime.fromisoformat(created) if isinstance(created, str) else updated
    except ValueError:
        return None
    return Item(value=value, key=key, namespace=namespace, created_at=made, updated_at=updated)


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
