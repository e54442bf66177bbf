"""The engine configurations the benchmark measures: the shipped default and one row per choice.

Each ablation changes one thing of the default, so its row shows what that choice is worth. Every
ranking feature (memory_engine.retrieval.features) has its row: `without(name)` sets its weight
to 0 (tests/bench/test_locomo_variants.py holds that to every feature).
Variants sharing what is indexed (and how turns are extracted) share one ingestion.
"""

from __future__ import annotations

from dataclasses import replace

from bench.quality.locomo.engine_run import Variant
from memory_engine.retrieval.config import PREVIOUS_WEIGHTS, RetrievalConfig

DEFAULT = RetrievalConfig()

DEFAULT_NAME = "engine (default)"
FORCED_NAME = "client ends each session with force_summary"
UNCLOSED_NAME = "− closing earlier sessions (leftovers stay buffered)"
OWN_DOCUMENT_NAME = "− a buffered turn's own document features (memory parts only for memories)"
SHARE_POWER_NAME = "− squared memory share (memory documents' BM25 times the memory side's share itself)"
ONE_SCALE_NAME = "− one lexical scale (each source's BM25 over its own best, memory documents' too)"
BUFFERED_WINDOWS_NAME = "− buffered turns' windows (a buffered turn's cosine alone, no window part)"
BATCHES_NAME = "− buffered batches (a buffered turn's own line as its document, not its batch)"
FORMING_WEIGHT_NAME = "+ memory BM25 0.1 while forming (buffered turns beside memories)"
BEFORE_41_NAME = "before issue 41 (no own document features; each source's BM25 on its own scale)"


def build(default: RetrievalConfig) -> tuple[Variant, ...]:
    """The rows around `default`: the shipped configuration, or an embedder's profile
    (`retrieval.config.for_embedder`), so each ablation changes one thing of what that engine runs."""
    w = default.weights

    def without(feature: str) -> RetrievalConfig:
        """The default with one feature's weight at 0: its ablation row."""
        return replace(default, weights={**w, feature: 0.0})

    return (
        Variant(DEFAULT_NAME, default),
        Variant(FORCED_NAME, default, extract_all=True),
        Variant(UNCLOSED_NAME, default, close_sessions=False),
        Variant("memories of 4 turns (batch_size 4)", default, batch_size=4),
        Variant("− evidence order (a memory's turns in source order)", default, evidence_order=False),
        Variant(
            "previous weights (0.8 dense, memory BM25 1.0, handicap 0.8), source order",
            replace(default, weights=PREVIOUS_WEIGHTS, window_share=0.0),
            evidence_order=False,
        ),
        Variant(
            "− turn documents (memory documents only)",
            replace(default, turn_documents=False, weights={**w, "memory_dense": w["dense"]}),
        ),
        Variant("− dates in the indexed text", replace(default, dates_in_text=False)),
        Variant("− date match (question's dates vs the turn's)", without("date")),
        Variant("− speaker match (the question names the turn's speaker)", without("speaker")),
        Variant("− memory-document BM25", without("memory")),
        Variant(
            "turns scored by BM25 only",
            replace(default, weights={**w, "dense": 0.0, "window": 0.0, "lexical": 1.0}),
        ),
        Variant(
            "turns scored by the embedder only",
            replace(default, weights={**w, "dense": 1.0, "window": 1.0, "lexical": 0.0}),
        ),
        Variant(
            "− dense-only Korean ranking (Korean questions keep the lexical terms)",
            replace(default, korean_lexical_share=1.0),
        ),
        Variant(
            "− window vectors (a turn's cosine alone, not mixed with its ±1 window's)",
            replace(default, window_share=0.0),
        ),
        Variant("− memory-document cosine (its summary vector)", without("memory_dense")),
        Variant(OWN_DOCUMENT_NAME, replace(default, own_document=False)),
        Variant(SHARE_POWER_NAME, replace(default, memory_share_power=1.0)),
        Variant(ONE_SCALE_NAME, replace(default, one_lexical_scale=False)),
        Variant(BUFFERED_WINDOWS_NAME, replace(default, buffered_windows=False)),
        Variant(BATCHES_NAME, replace(default, buffered_batches=False)),
        # Not shipped (issue 41): measured on every run, drained and forming, before it is.
        Variant(FORMING_WEIGHT_NAME, replace(default, forming_memory_weight=0.1)),
    )


VARIANTS: tuple[Variant, ...] = build(DEFAULT)


def forming_variants(variants: tuple[Variant, ...]) -> tuple[Variant, ...]:
    """The forming benchmark's rows (bench/quality/locomo/forming.py): the default, the memory
    documents' BM25 times the memory side's share unsquared, the ranking with each source's BM25
    on its own scale, buffered turns without window cosines, buffered turns scored by their own
    line instead of their batch, the memory documents' BM25 at 0.1 while
    a question has buffered and memory candidates, and the one in which a buffered turn
    has no document features of its own either (main before issue 41)."""
    default = variants[0].config
    named = {variant.name: variant for variant in variants}
    return (
        variants[0],
        named[SHARE_POWER_NAME],
        named[ONE_SCALE_NAME],
        named[BUFFERED_WINDOWS_NAME],
        named[BATCHES_NAME],
        named[FORMING_WEIGHT_NAME],
        Variant(
            BEFORE_41_NAME,
            replace(
                default,
                own_document=False,
                one_lexical_scale=False,
                buffered_windows=False,
                buffered_batches=False,
            ),
        ),
    )


FORMING_VARIANTS: tuple[Variant, ...] = forming_variants(VARIANTS)


def ingestion_key(variant: Variant) -> tuple[bool | int, ...]:
    """What decides the index's content: variants with the same key can share one ingestion."""
    config = variant.config
    return (
        config.turn_documents,
        config.dates_in_text,
        variant.extract_all,
        variant.close_sessions,
        variant.batch_size,
    )
