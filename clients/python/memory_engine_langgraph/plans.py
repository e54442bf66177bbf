"""A batch of LangGraph store operations as one plan of memory-bank calls (see memory_engine_client's
`Plan`), run by the sync or the async client alike.

As LangGraph's own in-memory store does, the reads of a batch see the store as it was before the
batch, and its writes (the last one per namespace and key) are applied after them. Calls with no
order between them (the namespaces' listings, the searches, the writes) go out together: at once
with the async client, within its bound.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from memory_engine_client import Call, Plan, Together, bank
from memory_engine_client.models import BankMemory, RetrieveMemoriesResponse
from memory_engine_langgraph import mapping
from memory_engine_langgraph.mapping import Namespace, Version

MAX_TOP_K = 100  # the bank's similarity search returns at most this many per scope
Stored = dict[Namespace, dict[str, list[Version]]]


def batch(ops: Iterable[Op], fields: Sequence[str] | None, known: set[Namespace]) -> Plan[list[Result]]:
    """Every operation's result, in order (None for a put). `known` holds namespaces already seen
    in the registry, which only grows: a put into one of them need not read the registry again."""
    ops = list(ops)
    for op in ops:
        validate_op_namespace(op)
    namespaces = set(known)
    reads = any(isinstance(op, SearchOp | ListNamespacesOp) for op in ops)
    if reads or any(isinstance(op, PutOp) and op.namespace not in known for op in ops):
        (registry,) = yield from _list_all([mapping.REGISTRY])
        namespaces = mapping.registered(registry)
        known |= namespaces
    touched = {op.namespace for op in ops if isinstance(op, GetOp | PutOp)}
    touched |= {ns for op in ops if isinstance(op, SearchOp) for ns in _under(namespaces, op)}
    wanted = sorted(touched)
    listed = dict(zip(wanted, (yield from _list_all([mapping.scope_of(ns) for ns in wanted])), strict=True))
    stored = {ns: mapping.versions(memories, ns) for ns, memories in listed.items()}

    results: list[Result] = [None] * len(ops)
    for n, op in enumerate(ops):
        if isinstance(op, GetOp):
            results[n] = mapping.newest(stored[op.namespace].get(op.key, []))
        elif isinstance(op, ListNamespacesOp):
            results[n] = _namespaces(namespaces, op)
        elif isinstance(op, SearchOp) and not op.query:
            results[n] = _page([_scored(item, None) for item in _items(stored, namespaces, op)], op)
    for n, op in enumerate(ops):
        if isinstance(op, SearchOp) and op.query:
            results[n] = yield from _search(op, stored, namespaces)

    puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}
    yield from _write(list(puts.values()), stored, namespaces, fields)
    known |= namespaces
    return results


def _list_all(scopes: list[dict[str, str]]) -> Plan[list[list[BankMemory]]]:
    """Every memory of each scope, the scopes' pages fetched together."""
    found: list[list[BankMemory]] = [[] for _ in scopes]
    tokens: dict[int, str | None] = dict.fromkeys(range(len(scopes)))
    while tokens:
        order = list(tokens)
        pages: list[RetrieveMemoriesResponse] = yield Together(
            tuple(bank.bank_list(scopes[i], page_size=1000, page_token=tokens[i]) for i in order)
        )
        tokens = {}
        for i, page in zip(order, pages, strict=True):
            found[i].extend(hit.memory for hit in page.retrieved_memories)
            if page.next_page_token:
                tokens[i] = page.next_page_token
    return found


def _items(stored: Stored, namespaces: set[Namespace], op: SearchOp) -> list[Item]:
    """The items under the prefix that pass the filter, in the order they were first put (as
    LangGraph's in-memory store lists them: an update keeps an item's place)."""
    items = [
        item
        for ns in _under(namespaces, op)
        for listed in stored[ns].values()
        if (item := mapping.newest(listed)) is not None and mapping.matches(item.value, op.filter)
    ]
    return sorted(items, key=lambda item: (item.created_at, item.namespace, item.key))


def _search(op: SearchOp, stored: Stored, namespaces: set[Namespace]) -> Plan[list[SearchItem]]:
    """As LangGraph's in-memory store ranks: each item by the best of its texts' similarities
    (cosine, from the unit vectors' Euclidean distance the bank returns: 1 - d²/2), best first;
    items with no text to rank (put with `index=False`) fill the page after them, unscored."""
    assert op.query is not None
    under = sorted(_under(namespaces, op))
    answers: list[RetrieveMemoriesResponse] = yield Together(
        tuple(bank.bank_search(mapping.index_scope_of(ns), op.query, top_k=MAX_TOP_K) for ns in under)
    )
    candidates = _items(stored, namespaces, op)
    owner = {
        name: (item.namespace, item.key)
        for item in candidates
        for name in stored[item.namespace][item.key][0].index
    }
    best: dict[tuple[Namespace, str], float] = {}
    for answer in answers:
        for hit in answer.retrieved_memories:
            held = owner.get(hit.memory.name)
            if held is not None:
                score = 1 - (hit.distance or 0.0) ** 2 / 2
                best[held] = max(score, best.get(held, -2.0))
    by_key = {(item.namespace, item.key): item for item in candidates}
    ranked = sorted(best, key=lambda held: best[held], reverse=True)
    kept = [_scored(by_key[held], best[held]) for held in ranked[op.offset : op.offset + op.limit]]
    scoreless = [item for item in candidates if not stored[item.namespace][item.key][0].index]
    if len(kept) < op.limit:
        kept += [_scored(item, None) for item in scoreless[: op.limit - len(kept)]]
    return kept


def _write(
    puts: list[PutOp], stored: Stored, namespaces: set[Namespace], fields: Sequence[str] | None
) -> Plan[None]:
    """Each put's new version (its index facts first, then its record naming them), then every
    older version deleted: a failure in between leaves the item twice (the newest complete version
    is read), never lost."""
    now = datetime.now(UTC).isoformat()
    registry: list[Call[Any]] = []
    texts: list[tuple[PutOp, list[str]]] = []
    for op in puts:
        if op.namespace not in namespaces and op.value is not None:
            namespaces.add(op.namespace)
            registry.append(bank.bank_create(mapping.registry_fact(op.namespace), mapping.REGISTRY))
        if op.value is not None:
            chosen = fields if op.index is None else (op.index or [])
            texts.append((op, mapping.index_texts(op.value, chosen)))
    indexed = [
        bank.bank_create(text, mapping.index_scope_of(op.namespace)) for op, found in texts for text in found
    ]
    made: list[BankMemory] = (
        (yield Together(tuple(registry + indexed)))[len(registry) :] if registry or indexed else []
    )
    records: list[Call[Any]] = []
    for op, found in texts:
        names, made = [memory.name for memory in made[: len(found)]], made[len(found) :]
        before = stored[op.namespace].get(op.key, [])
        kept = mapping.newest(before)
        created = kept.created_at.isoformat() if kept is not None else now
        version = uuid.uuid4().hex[:12]
        assert op.value is not None
        for fact in mapping.record_facts(op.key, op.value, created, version, names):
            records.append(bank.bank_create(fact, mapping.scope_of(op.namespace)))
    if records:
        yield Together(tuple(records))
    old = [name for op in puts for v in stored[op.namespace].get(op.key, []) for name in (*v.names, *v.index)]
    if old:
        yield Together(tuple(bank.bank_delete(name) for name in old))


def _under(namespaces: set[Namespace], op: SearchOp) -> list[Namespace]:
    prefix = tuple(op.namespace_prefix)
    return [ns for ns in namespaces if ns[: len(prefix)] == prefix]


def _namespaces(namespaces: set[Namespace], op: ListNamespacesOp) -> list[Namespace]:
    chosen = [
        ns for ns in namespaces if all(mapping.namespace_matches(ns, c) for c in op.match_conditions or ())
    ]
    if op.max_depth is not None:
        chosen = list({ns[: op.max_depth] for ns in chosen})
    return sorted(chosen)[op.offset : op.offset + op.limit]


def _scored(item: Item, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )


def _page(items: list[SearchItem], op: SearchOp) -> list[SearchItem]:
    return items[op.offset : op.offset + op.limit]
