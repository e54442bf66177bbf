"""The bundle of ports a use case works with. Built by `wiring` in production, by tests with fakes."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from threading import Lock
from typing import TYPE_CHECKING, Any

from memory_engine.errors import Unavailable
from memory_engine.limits import Limits
from memory_engine.ports import (
    ChatUpstream,
    Clock,
    Embedder,
    Extractor,
    Queue,
    SearchIndex,
    Store,
    TurnArrivals,
)
from memory_engine.ports.arrivals import NoArrivals
from memory_engine.ports.clock import SystemClock

if TYPE_CHECKING:
    from memory_engine.extraction.fact_extractor import FactExtractor
    from memory_engine.retrieval.config import RetrievalConfig
    from memory_engine.retrieval.features import AnalysedText


class NoChatUpstream:
    """Stands in where no chat upstream was wired (engines built by hand without one)."""

    MESSAGE = "No chat model is configured: set OPENAI_BASE_URL (and OPENAI_API_KEY)."

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        raise Unavailable(self.MESSAGE)

    def stream(self, body: dict[str, Any]) -> Iterator[str]:
        raise Unavailable(self.MESSAGE)


class VectorCache:
    """A bounded LRU of float lists by key: still-buffered turns' embeddings, so retrieve embeds
    each turn once, or their dots with their neighbours (`Engine.turn_dots`)."""

    def __init__(self, capacity: int = 50_000) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = Lock()

    def get(self, key: str) -> list[float] | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is not None:
                self._items.move_to_end(key)
            return vector

    def put(self, key: str, vector: list[float]) -> None:
        with self._lock:
            self._items[key] = vector
            self._items.move_to_end(key)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)


# Every handler imports this module, most of them for the type alone: the fact extractor's rules
# and the ranking's configuration load when an engine is built, not with a handler's import
# (cold start; a bank search never extracts).
def _builtin_fact_extractor() -> FactExtractor:
    from memory_engine.extraction.fact_extractor import BuiltinFactExtractor

    return BuiltinFactExtractor()


def _default_retrieval() -> RetrievalConfig:
    from memory_engine.retrieval.config import RetrievalConfig

    return RetrievalConfig()


class TermCache:
    """A bounded LRU of buffered turns' analysed words (`usecases.turn_terms`), so a retrieve
    analyses each turn once. Bounded by the distinct terms it holds, not by entries: one long
    turn weighs what hundreds of short ones do."""

    def __init__(self, capacity_terms: int = 500_000) -> None:
        self._capacity = capacity_terms
        self._items: OrderedDict[str, AnalysedText] = OrderedDict()
        self._held = 0
        self._lock = Lock()

    def get(self, key: str) -> AnalysedText | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, analysed: AnalysedText) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            self._held -= len(old.terms.counts) if old is not None else 0
            self._items[key] = analysed
            self._held += len(analysed.terms.counts)
            while self._held > self._capacity and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self._held -= len(dropped.terms.counts)


@dataclass
class Engine:
    limits: Limits  # what the use cases read of the configuration
    store: Store
    queue: Queue
    index: SearchIndex
    embedder: Embedder
    extractor: Extractor
    clock: Clock = field(default_factory=SystemClock)
    turn_vectors: VectorCache = field(default_factory=VectorCache)
    # Buffered turns' dots with themselves and their next two turns (`retrieve._windows`).
    turn_dots: VectorCache = field(default_factory=VectorCache)
    turn_terms: TermCache = field(default_factory=TermCache)
    # Told of each newly buffered turn (the local server embeds it in the background).
    arrivals: TurnArrivals = field(default_factory=NoArrivals)
    # The API dialects: short-fact extraction (memory bank, chat memory) and the chat model.
    facts: FactExtractor = field(default_factory=_builtin_fact_extractor)
    chat: ChatUpstream = field(default_factory=NoChatUpstream)
    retrieval: RetrievalConfig = field(default_factory=_default_retrieval)
