"""Typed ports. Use cases depend on these; adapters (local, aws, openai) implement them.

One module per port, each re-exported here: import ports from `memory_engine.ports`.
"""

from __future__ import annotations

from memory_engine.ports.arrivals import TurnArrivals
from memory_engine.ports.chat import ChatUpstream
from memory_engine.ports.clock import Clock
from memory_engine.ports.embedder import CopyableEmbedder, Embedder, EmbedMode
from memory_engine.ports.extractor import (
    CurrentFact,
    Extraction,
    ExtractionContext,
    Extractor,
    ReadsCurrentFacts,
)
from memory_engine.ports.index import (
    DocKind,
    EventuallyConsistent,
    IndexBootstrap,
    IndexDocument,
    IndexHit,
    Period,
    SearchIndex,
)
from memory_engine.ports.keys import KeyStore
from memory_engine.ports.queue import (
    DeadLetters,
    JobSource,
    Queue,
    QueueInspector,
    SingleConsumerQueue,
)
from memory_engine.ports.store import Buffer, ConsolidateOutcome, FactScope, ForkPlan, RemovalOutcome, Store
from memory_engine.ports.usage_plan import UsagePlanKeys

__all__ = [
    "Buffer",
    "ChatUpstream",
    "Clock",
    "ConsolidateOutcome",
    "CopyableEmbedder",
    "CurrentFact",
    "DeadLetters",
    "DocKind",
    "EmbedMode",
    "Embedder",
    "EventuallyConsistent",
    "Extraction",
    "ExtractionContext",
    "Extractor",
    "FactScope",
    "ForkPlan",
    "IndexBootstrap",
    "IndexDocument",
    "IndexHit",
    "JobSource",
    "KeyStore",
    "Period",
    "Queue",
    "QueueInspector",
    "ReadsCurrentFacts",
    "RemovalOutcome",
    "SearchIndex",
    "SingleConsumerQueue",
    "Store",
    "TurnArrivals",
    "UsagePlanKeys",
]
