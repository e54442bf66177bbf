"""The engine configurations the benchmark measures: the shipped default and one row per choice.

Each ablation changes one thing of the default, so its row shows what that choice is worth.
Variants sharing what is indexed (and how turns are extracted) share one ingestion.
"""

from __future__ import annotations

from dataclasses import replace

from bench.locomo.engine_run import Variant
from memory_engine.retrieval.config import RetrievalConfig
from memory_engine.retrieval.fusion import FusionWeights

DEFAULT = RetrievalConfig()
_W = DEFAULT.weights

DEFAULT_NAME = "engine (default)"

BUFFERED_NAME = "engine, sessions' leftover turns left buffered"

VARIANTS: tuple[Variant, ...] = (
    Variant(DEFAULT_NAME, DEFAULT),
    Variant(BUFFERED_NAME, DEFAULT, extract_all=False),
    Variant(
        "− turn documents (memory documents only)",
        replace(DEFAULT, turn_documents=False, weights=replace(_W, memory_dense=_W.turn_dense)),
    ),
    Variant("− dates in the indexed text", replace(DEFAULT, dates_in_text=False)),
    Variant("− memory-document BM25", replace(DEFAULT, weights=replace(_W, memory_lexical=0.0))),
    Variant("turns scored by BM25 only", replace(DEFAULT, weights=replace(_W, turn_dense=0.0))),
    Variant("turns scored by MiniLM only", replace(DEFAULT, weights=replace(_W, turn_dense=1.0))),
    Variant(
        "leftovers buffered, − memory handicap",
        replace(DEFAULT, weights=replace(_W, memory_handicap=0.0)),
        extract_all=False,
    ),
    Variant(
        "previous default (memory documents only, 0.5/0.5)",
        RetrievalConfig(
            turn_documents=False,
            dates_in_text=False,
            weights=FusionWeights(turn_dense=0.5, memory_lexical=0.5, memory_dense=0.5, memory_handicap=0.0),
        ),
    ),
)


def ingestion_key(variant: Variant) -> tuple[bool, bool, bool]:
    """What decides the index's content: variants with the same key can share one ingestion."""
    return (variant.config.turn_documents, variant.config.dates_in_text, variant.extract_all)
