"""The lexical half of the local index: BM25 on tantivy, one tantivy index per document kind.

Each kind has its own tantivy index, so its BM25 statistics (document frequencies, average
length) are that kind's alone, as one field of one OpenSearch index has them: a turn's score is
never diluted by memory-sized documents. The text is analysed by the engine's own analyzer
(`retrieval.text.tokenize`) and handed to tantivy's whitespace tokenizer, so indexed documents,
buffered turns and queries see the same tokens. A document is keyed by tenant and id; a search is
confined to a tenant's threads by a term filter. Besides the tokens, each document stores what a
hit echoes (its id, thread, memory, dates and text) and what `get` gives back, so no copy of them
is kept in Python.

Every write is committed before it returns (read-your-writes), the kinds it touched side by
side; on disk, tantivy's commits are atomic and its segments are merged in the background.
tantivy is imported inside methods.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from memory_engine.ports import DocKind, IndexDocument, Period
from memory_engine.retrieval.text import tokenize

if TYPE_CHECKING:
    import tantivy

__all__ = ["KINDS", "Details", "Found", "LexicalIndex", "Stored", "details"]

KINDS: tuple[DocKind, ...] = ("memory", "turn")
_SEP = "\x1f"  # between tenant and id in a key: a character no id or thread holds in practice
_HEAP = 50_000_000  # tantivy's indexing buffer (bytes); a write batch is a few documents
# `said` of a document with no time (a fact): below every real one, so an event-time range with an
# open start holds it without a clause of its own, and one with a start names it (`Period.holds`).
_UNDATED = -(2**63)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Stored(NamedTuple):
    """What a hit echoes of a document (a memory document's text only through `details`)."""

    doc_id: str
    thread: str
    memory_id: str | None
    occurred_at: datetime | None
    text: str  # a turn document's; "" for a memory document
    doc: Any  # tantivy's stored document, for `details`


class Found(NamedTuple):
    """What `LexicalIndex.search` found: scores by doc id (in rank order) and the stored fields."""

    lexical: dict[str, float]  # the k best by BM25
    lexical_of: dict[str, float]  # the BM25 of the named documents
    stored: dict[str, Stored]  # what every one of them stores


class Details(NamedTuple):
    """The rest of a stored document, read for `LocalSearchIndex.get` only."""

    text: str
    session_uuid: str
    source_dialog_uuids: list[str]
    created_at: datetime


def _key(tenant: str, name: str) -> str:
    return f"{tenant}{_SEP}{name}"


def _schema() -> tantivy.Schema:
    import tantivy

    builder = tantivy.SchemaBuilder()
    for field in ("key", "scope", "part_of", "tenant"):  # exact terms: delete and filter by them
        builder.add_text_field(field, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("body", tokenizer_name="whitespace", index_option="freq")
    builder.add_unsigned_field("gen", indexed=True)  # the checkpoint a document was written after
    # When it was said, and each day it speaks of (`IndexDocument.spoken_of`), in microseconds
    # since the epoch: an event-time range filters the search on any of them.
    builder.add_integer_field("said", indexed=True, fast=True)
    # Stored only: what a hit echoes (small, decoded for every hit of a retrieve), the text, the rest.
    for field in ("hit", "text", "rest"):
        builder.add_bytes_field(field, stored=True, indexed=False)
    return builder.build()


class LexicalIndex:
    """BM25 over the documents of each kind, in memory (`directory` None) or in a folder per kind.

    Not thread-safe for writes: `LocalSearchIndex` calls it under its lock.
    """

    def __init__(self, directory: Path | None = None) -> None:
        import tantivy

        self.schema = _schema()
        self._indexes: dict[DocKind, tantivy.Index] = {}
        self._writers: dict[DocKind, Any] = {}
        self._searchers: dict[DocKind, Any] = {}
        for kind in KINDS:
            if directory is None:
                index = tantivy.Index(self.schema)
            else:
                folder = directory / f"lexical-{kind}"
                folder.mkdir(parents=True, exist_ok=True)
                index = tantivy.Index(self.schema, path=str(folder), reuse=True)
            self._indexes[kind] = index
            self._writers[kind] = index.writer(_HEAP, 1)
        self.generation = 0  # written into each document: the persisted index's next checkpoint
        self.opstamps: dict[DocKind, int] = {kind: self._writers[kind].commit_opstamp for kind in KINDS}

    # -- writes -----------------------------------------------------------------------------------

    def write(
        self,
        docs: Sequence[IndexDocument] = (),
        deleted: Iterable[tuple[DocKind, str, str]] = (),
    ) -> None:
        """Delete documents (kind, tenant, doc id), then add `docs` (replacing those with the same
        key), and commit: one commit per kind touched."""
        import tantivy

        touched: set[DocKind] = set()
        for kind, tenant, doc_id in deleted:
            self._writers[kind].delete_documents_by_term("key", _key(tenant, doc_id))
            touched.add(kind)
        for doc in docs:
            writer = self._writers[doc.kind]
            writer.delete_documents_by_term("key", _key(doc.tenant, doc.doc_id))
            hit = [
                doc.doc_id,
                doc.thread,
                doc.memory_id or "",
                doc.occurred_at.isoformat() if doc.occurred_at else "",
            ]
            rest = [doc.session_uuid, doc.source_dialog_uuids, doc.created_at.isoformat()]
            fields: dict[str, Any] = {
                "key": _key(doc.tenant, doc.doc_id),
                "scope": _key(doc.tenant, doc.thread),
                "tenant": doc.tenant,
                "body": " ".join(tokenize(doc.text)),
                "hit": _SEP.join(hit).encode(),
                "text": doc.text.encode(),
                "rest": json.dumps(rest, ensure_ascii=False).encode(),
            }
            if doc.memory_id:
                fields["part_of"] = _key(doc.tenant, doc.memory_id)
            document = tantivy.Document(**fields)
            document.add_unsigned("gen", self.generation)
            document.add_integer("said", _micros(doc.occurred_at) if doc.occurred_at else _UNDATED)
            for day in doc.spoken_of:  # a range holding a day it speaks of finds it too
                document.add_integer("said", _micros(day))
            writer.add_document(document)
            touched.add(doc.kind)
        self._commit(touched)

    def clear(self, tenant: str | None) -> None:
        for kind in KINDS:
            if tenant is None:
                self._writers[kind].delete_all_documents()
            else:
                self._writers[kind].delete_documents_by_term("tenant", tenant)
        self._commit(set(KINDS))

    def drop_after(self, generation: int) -> dict[DocKind, int]:
        """Delete the documents written after checkpoint `generation`; each kind's count left."""
        import tantivy

        for kind in KINDS:
            later = tantivy.Query.range_query(
                self.schema, "gen", tantivy.FieldType.Unsigned, generation + 1, None
            )
            self._writers[kind].delete_documents_by_query(later)
        self._commit(set(KINDS))
        return {kind: self._searcher(kind).num_docs for kind in KINDS}

    def _commit(self, kinds: set[DocKind]) -> None:
        """Commit each kind touched, the kinds side by side: a commit mostly waits for its files'
        fsyncs, outside the GIL, so two cost about one (a write of memories with their turns)."""
        ordered = sorted(kinds)
        if len(ordered) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(len(ordered)) as pool:
                stamps = list(pool.map(lambda kind: self._writers[kind].commit(), ordered))
        else:
            stamps = [self._writers[kind].commit() for kind in ordered]
        for kind, stamp in zip(ordered, stamps, strict=True):
            self.opstamps[kind] = stamp
            self._indexes[kind].reload()
            self._searchers.pop(kind, None)

    def count(self, kind: DocKind) -> int:
        """How many documents of the kind the index holds (every tenant's)."""
        return int(self._searcher(kind).num_docs)

    def close(self) -> None:
        """Let merges finish and release the folders' writer locks."""
        for kind in KINDS:
            self._writers[kind].wait_merging_threads()
        self._writers.clear()

    # -- reads ------------------------------------------------------------------------------------

    def _searcher(self, kind: DocKind) -> Any:
        searcher = self._searchers.get(kind)
        if searcher is None:
            searcher = self._searchers[kind] = self._indexes[kind].searcher()
        return searcher

    def lookup(self, tenant: str, doc_ids: Sequence[str]) -> dict[str, tuple[DocKind, Stored]]:
        """The documents of the tenant among `doc_ids`, with their kind."""
        found: dict[str, tuple[DocKind, Stored]] = {}
        if not doc_ids:
            return found
        for kind in KINDS:
            for stored in self._by_terms(kind, "key", [_key(tenant, doc_id) for doc_id in doc_ids]):
                found[stored.doc_id] = (kind, stored)
        return found

    def parts(self, tenant: str, memory_ids: Sequence[str]) -> list[tuple[DocKind, Stored]]:
        """The documents (of any kind) that are part of the memories named."""
        keys = [_key(tenant, memory_id) for memory_id in memory_ids]
        return [(kind, stored) for kind in KINDS for stored in self._by_terms(kind, "part_of", keys)]

    def _by_terms(self, kind: DocKind, field: str, values: Sequence[str]) -> list[Stored]:
        """Every document holding one of the terms (a key names one; a memory a few parts)."""
        import tantivy

        searcher = self._searcher(kind)
        if not values or not searcher.num_docs:
            return []
        query = tantivy.Query.term_set_query(self.schema, field, list(values))
        found = searcher.search(query, 2 * len(values), count=True)
        if found.count > len(found.hits):  # tantivy's collector sizes itself by the limit
            found = searcher.search(query, found.count, count=False)
        return list(_read(searcher, [address for _, address in found.hits]).values())

    def search(
        self,
        kind: DocKind,
        tenant: str,
        threads: Sequence[str],
        terms: Sequence[str],
        k: int,
        named: Sequence[str] = (),
        whole: bool = False,
        said: Period | None = None,
    ) -> Found:
        """The k best documents of the kind in the tenant's threads by BM25, and the BM25 of each
        `named` one (the dense hits: 0 for one holding no term; left out when the index does not
        hold it), with what every one of them stores.

        `whole`: the threads hold every document of the kind, so the top k is searched without
        the threads' filter, where tantivy skips blocks of postings that cannot reach it
        (block-max WAND; a filtered search scores every document holding a word). `said`: only
        documents said within it (or undated) are among the k best.

        Each document is read once, in the order of tantivy's store: hits of neighbouring
        documents share a compressed block (half the cost of reading them in score order)."""
        import tantivy

        found = Found({}, {}, {})
        searcher = self._searcher(kind)
        if not searcher.num_docs:
            return found
        Occur, Query = tantivy.Occur, tantivy.Query
        words = _any_of(self.schema, "body", terms) if terms else None
        best: list[tuple[float, Any]] = []
        if words is not None and whole and said is None:
            best = searcher.search(words, k, count=False).hits
        elif words is not None:
            scope = Query.term_set_query(self.schema, "scope", [_key(tenant, thread) for thread in threads])
            clauses = [(Occur.Must, words), (Occur.Must, Query.const_score_query(scope, 0.0))]
            if said is not None:
                clauses.append((Occur.Must, Query.const_score_query(self._said(said), 0.0)))
            best = searcher.search(Query.boolean_query(clauses), k, count=False).hits
        others: list[tuple[float, Any]] = []
        if named:
            # One term query per key, not a term set: a term set walks the key dictionary with an
            # automaton and fills a bitset of every document, twice the cost for a few dozen keys
            # (0.75 against 0.40 ms for 60 of 800k turn documents).
            each = [Query.term_query(self.schema, "key", _key(tenant, doc_id)) for doc_id in named]
            keys = Query.boolean_query([(Occur.Should, query) for query in each])
            clauses = [(Occur.Must, Query.const_score_query(keys, 0.0))]
            if words is not None:
                clauses.append((Occur.Should, words))
            others = searcher.search(Query.boolean_query(clauses), len(named), count=False).hits
        stored = _read(searcher, [address for _, address in best + others])
        for score, address in best:
            row = stored[address.segment_ord, address.doc]
            found.lexical[row.doc_id] = score
            found.stored[row.doc_id] = row
        for score, address in others:
            row = stored[address.segment_ord, address.doc]
            found.lexical_of[row.doc_id] = score
            found.stored[row.doc_id] = row
        return found

    def said_within(
        self, kind: DocKind, tenant: str, threads: Sequence[str], said: Period, most: int
    ) -> dict[str, Stored] | None:
        """The documents of the kind in the tenant's threads said within `said` (or undated), when
        there are at most `most` of them; None when there are more (too many to read one by one)."""
        import tantivy

        searcher = self._searcher(kind)
        if not searcher.num_docs:
            return {}
        Occur, Query = tantivy.Occur, tantivy.Query
        scope = Query.term_set_query(self.schema, "scope", [_key(tenant, thread) for thread in threads])
        query = Query.boolean_query([(Occur.Must, scope), (Occur.Must, self._said(said))])
        found = searcher.search(query, most + 1, count=False)
        if len(found.hits) > most:
            return None
        return {row.doc_id: row for row in _read(searcher, [address for _, address in found.hits]).values()}

    def _said(self, said: Period) -> Any:
        """Documents said within the period, and those without a time (facts)."""
        import tantivy

        Query, Integer = tantivy.Query, tantivy.FieldType.Integer
        since = _micros(said.since) if said.since else None
        until = _micros(said.until) if said.until else None
        if since is None and until is None:
            return Query.all_query()
        dated = Query.range_query(self.schema, "said", Integer, since, until)
        if since is None:
            return dated  # the open start already holds the undated (`_UNDATED` is below all)
        undated = Query.range_query(self.schema, "said", Integer, _UNDATED, _UNDATED)
        return Query.boolean_query([(tantivy.Occur.Should, dated), (tantivy.Occur.Should, undated)])


def _micros(moment: datetime) -> int:
    """Microseconds since the epoch, exact (a naive time is read as UTC, as the models do)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return (aware - _EPOCH) // timedelta(microseconds=1)


def _any_of(schema: Any, field: str, values: Sequence[str]) -> Any:
    """Documents holding any of the terms; a term given twice counts twice in the score (a word
    repeated in a query weighs more, as BM25's query-term frequency has it)."""
    import tantivy

    if len(values) == 1:
        return tantivy.Query.term_query(schema, field, values[0])
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, tantivy.Query.term_query(schema, field, value)) for value in values]
    )


def _read(searcher: Any, addresses: Sequence[Any]) -> dict[tuple[int, int], Stored]:
    """The documents at `addresses`, each read once, in store order, keyed by (segment, doc)."""
    places = sorted({(address.segment_ord, address.doc): address for address in addresses}.items())
    return {place: _stored(searcher.doc(address)) for place, address in places}


def _stored(doc: Any) -> Stored:
    doc_id, thread, memory_id, occurred = doc.get_first("hit").decode().split(_SEP)
    return Stored(
        doc_id, thread, memory_id or None, datetime.fromisoformat(occurred) if occurred else None,
        doc.get_first("text").decode() if memory_id else "", doc,
    )  # fmt: skip


def details(stored: Stored) -> Details:
    """The text, session, source dialogs and creation time of a stored document."""
    session_uuid, sources, created = json.loads(stored.doc.get_first("rest"))
    text = stored.doc.get_first("text").decode()
    return Details(text, session_uuid, sources, datetime.fromisoformat(created))
