"""A batch of LangGraph store operations as one plan of memory-bank calls (see memory_engine_client's
`Plan`), run by the sync or the async client alike.

As LangGraph's own in-memory store does, the reads of a batch see the store as it was before the
batch, and its writes (the last one per namespace and key) are applied after them. Calls with no
order between them (the namespaces' listings, the searches, the writes) go out together: at once
with the async client.
"""

from __future__ import annotations

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
from memory_engine_langgraph.mapping import Namespace

MAX_TOP_K = 100  # the bank's similarity search returns at most this many per scope


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
    listings = [op for op in ops if isinstance(op, SearchOp) and not op.query]
    touched |= {ns for op in listings for ns in _under(namespaces, op)}
    wanted = sorted(touched)
    listed = dict(zip(wanted, (yield from _list_all([mapping.scope_of(ns) for ns in wanted])), strict=True))
    stored = {ns: mapping.versions(memories, ns) for ns, memories in listed.items()}

    results: list[Result] = [None] * len(ops)
    for n, op in enumerate(ops):
        if isinstance(op, GetOp):
            found = stored[op.namespace].get(op.key)
            results[n] = found[0][0] if found else None
        elif isinstance(op, ListNamespacesOp):
            results[n] = _namespaces(namespaces, op)
        elif isinstance(op, SearchOp) and not op.query:
            items = [v[0][0] for ns in _under(namespaces, op) for v in stored[ns].values()]
            items.sort(key=lambda item: item.updated_at, reverse=True)
            results[n] = _page(
                [_scored(item, None) for item in items if mapping.matches(item.value, op.filter)], op
            )
    searches = [(n, op) for n, op in enumerate(ops) if isinstance(op, SearchOp) and op.query]
    for n, op in searches:
        results[n] = yield from _search(op, sorted(_under(namespaces, op)))

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


def _search(op: SearchOp, namespaces: list[Namespace]) -> Plan[list[SearchItem]]:
    """The nearest items of every namespace under the prefix, by the bank's distance. With a
    filter, the nearest MAX_TOP_K of each namespace are the ones filtered."""
    assert op.query is not None
    top_k = MAX_TOP_K if op.filter else min(MAX_TOP_K, op.offset + op.limit)
    calls: tuple[Call[Any], ...] = tuple(
        bank.bank_search(mapping.scope_of(ns), op.query, top_k=top_k) for ns in namespaces
    )
    answers: list[RetrieveMemoriesResponse] = yield Together(calls)
    best: dict[tuple[Namespace, str], SearchItem] = {}
    for ns, answer in zip(namespaces, answers, strict=True):
        for hit in answer.retrieved_memories:
            item = mapping.item_of(hit.memory, ns)
            if item is None or not mapping.matches(item.value, op.filter):
                continue
            # Unit vectors: cosine = 1 - d²/2, higher is closer, as LangGraph's scores are.
            scored = _scored(item, 1 - (hit.distance or 0.0) ** 2 / 2)
            kept = best.get((ns, item.key))
            if kept is None or (kept.updated_at, kept.score or 0) < (scored.updated_at, scored.score or 0):
                best[(ns, item.key)] = scored  # an older version of the key found too: the newest speaks
    ranked = sorted(best.values(), key=lambda item: item.score or 0.0, reverse=True)
    return _page(ranked, op)


def _write(
    puts: list[PutOp],
    stored: dict[Namespace, dict[str, list[tuple[Item, str]]]],
    namespaces: set[Namespace],
    fields: Sequence[str] | None,
) -> Plan[None]:
    """New versions first, then the old ones deleted: a failure in between leaves the item twice
    (the newest wins on read), never lost."""
    now = datetime.now(UTC).isoformat()
    creates: list[Call[Any]] = []
    for op in puts:
        if op.value is None:
            continue
        if op.namespace not in namespaces:
            namespaces.add(op.namespace)
            creates.append(bank.bank_create(mapping.registry_fact(op.namespace), mapping.REGISTRY))
        before = stored[op.namespace].get(op.key)
        created = before[-1][0].created_at.isoformat() if before else now
        chosen = fields if op.index is None else (op.index or [])
        fact = mapping.fact_of(op.key, op.value, created, chosen)
        creates.append(bank.bank_create(fact, mapping.scope_of(op.namespace)))
    if creates:
        yield Together(tuple(creates))
    deletes = tuple(bank.bank_delete(name) for op in puts for _, name in stored[op.namespace].get(op.key, []))
    if deletes:
        yield Together(deletes)


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
