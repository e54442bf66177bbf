"""The search index ports: the documents it holds, the hits it returns, its deploy-time creation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from pydantic import ConfigDict, Field

from memory_engine.models.base import Model

# What an index document stands for: a whole memory, or one source turn of a memory (a part that
# points back to it through `memory_id`). Lexical statistics are kept per kind.
DocKind = Literal["memory", "turn"]


class IndexDocument(Model):
    """A memory, or one turn of a memory, as the search index sees it."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    doc_id: str
    session_uuid: str
    thread: str
    text: str
    vector: list[float] = Field(repr=False)
    source_dialog_uuids: list[str]
    created_at: datetime
    kind: DocKind = "memory"
    # For a "turn" document: the memory it is part of. Deleting that memory's document deletes it.
    memory_id: str | None = None
    # When it was said: the turn's timestamp (a memory's: its first turn's). None for a fact.
    occurred_at: datetime | None = None
    # For a "turn" document: the vector of the turn with its neighbours (`indexing.documents.
    # window_text`), whose cosine retrieval mixes into the turn's. None: scored by `vector` alone.
    window_vector: list[float] | None = Field(default=None, repr=False)
    # The days it speaks of in relative words, resolved at write ("yesterday" said on 9 May: 8 May,
    # `extraction.event_dates`): an event-time range holding one of them finds it too.
    spoken_of: list[datetime] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class IndexHit:
    """A candidate with both raw scores; either may be 0 when only one retriever found it.

    A plain dataclass, not a pydantic model: an adapter builds it from documents the index already
    validated (or, on AWS, from fields it parses itself), and a retrieve builds ~500 of them (k
    dense and k lexical per kind), where constructing models cost ~10 ms of a ~20 ms call.
    """

    doc_id: str
    dense: float = 0.0
    lexical: float = 0.0
    # Echo of the document's `memory_id` (the memory a turn document is part of); None for a memory.
    memory_id: str | None = None
    # Echo of the document's `occurred_at`, for matching dates the query names.
    occurred_at: datetime | None = None
    # Echo of the document's `text` for a turn document (its line and date): a hit's evidence.
    text: str = ""
    # The query's cosine to the turn document's window vector; None when it has none.
    window: float | None = None


@dataclass(frozen=True, slots=True)
class Period:
    """Event-time bounds of a search, each end inclusive or open (None): a document said outside
    them is no candidate at all, so a narrow range still fills k, unless one of the days it speaks
    of (`IndexDocument.spoken_of`) is inside them; one without a time (a fact) always is one."""

    since: datetime | None = None
    until: datetime | None = None

    def holds(self, moment: datetime | None) -> bool:
        """Whether a document said at `moment` is a candidate."""
        if moment is None:
            return True
        return (self.since is None or moment >= self.since) and (self.until is None or moment <= self.until)


class SearchIndex(Protocol):
    """Derived data: rebuilt from the store whenever needed.

    An adapter subclasses it to get `search` as `search_kinds` of one kind.
    """

    def upsert(self, docs: Sequence[IndexDocument]) -> None: ...

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        """Remove the documents and every document whose `memory_id` is among `doc_ids`."""
        ...

    def search(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: int,
        kind: DocKind = "memory",
        said: Period | None = None,
    ) -> list[IndexHit]:
        """Up to k dense and up to k lexical candidates of one kind within the threads, merged by doc id.

        BM25 statistics (document frequencies, average length) are those of the documents of that
        kind, so a turn's lexical score is never diluted by memory-sized documents. Each hit has
        both scores (the other retriever's computed for it, 0 BM25 when it shares no word), dense
        hits first, best first, then lexical-only ones (`retrieval.candidates.merge`). An empty
        `vector` searches by words only, an empty `text` by meaning only. `said`: only documents
        said within it (or with no time) are candidates, filtered by the index's own query.
        """
        return self.search_kinds(tenant, threads, text, vector, {kind: k}, said)[kind]

    def search_kinds(
        self,
        tenant: str,
        threads: Sequence[str],
        text: str,
        vector: Sequence[float],
        k: Mapping[DocKind, int],
        said: Period | None = None,
        terms: Sequence[str] | None = None,
    ) -> dict[DocKind, list[IndexHit]]:
        """`search` for several kinds at once, up to `k[kind]` candidates of each: one call, so a
        remote index answers every kind in the same request. Every kind asked for has a list,
        empty when nothing matches. `terms`: `text` as the engine's analyzer reads it
        (`retrieval.text.tokenize`), when the caller has it already; an index that analyses with
        the engine's analyzer uses it instead of reading `text` again, one that analyses on its own
        side (OpenSearch) ignores it."""
        ...

    def clear(self, tenant: str | None = None) -> None: ...


@runtime_checkable
class IndexBootstrap(Protocol):
    """An index that must be created before use (OpenSearch): run once at deploy time."""

    def ensure_index(self) -> None:
        """Create the index with its mapping if it does not exist; a no-op when it does."""
        ...


@runtime_checkable
class EventuallyConsistent(Protocol):
    """An index whose searches show a write only some time after it (OpenSearch's refresh).

    Its deletes find the copies to remove by searching, so one sent right after a write may miss
    the copy just written: `usecases.index_purge` deletes again once `settle_seconds` have passed."""

    @property
    def settle_seconds(self) -> float:
        """How long after a write every search is sure to show it; 0 when at once."""
        ...
