"""What retrieval indexes and how it ranks: one measured default, variants for the benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_engine.retrieval.fusion import FusionWeights

# The measured default (bench/locomo/tune.py: chosen on the dev split, cross-validated by leaving
# each conversation out; docs/retrieval.md): the dense share of a turn's score, the date bonus, the
# memory document's BM25 and the handicap that offsets it against raw buffered turns.
DEFAULT_WEIGHTS = FusionWeights(
    turn_dense=0.95, turn_date=0.1, memory_lexical=0.25, memory_dense=0.25, memory_handicap=0.0
)
# The weights shipped before evidence-ordered hits (kept for the benchmark's comparison row).
PREVIOUS_WEIGHTS = FusionWeights()


@dataclass(frozen=True)
class RetrievalConfig:
    """The shipped default is the configuration measured in bench/results/locomo_retrieval.json.

    Indexing options change what extraction writes to the index, so an engine keeps one config
    for both; the benchmark builds an engine per variant for its ablation rows.
    """

    # Index each source turn of a memory as its own document pointing back to the memory.
    turn_documents: bool = True
    # Append the turn's date ("8 May 2023") to the text BM25 sees, for "what did X do in May?".
    dates_in_text: bool = True
    weights: FusionWeights = field(default_factory=lambda: DEFAULT_WEIGHTS)
    # Candidates per retriever (dense and lexical) asked of the index, per document kind.
    memory_candidates: int = 50
    turn_candidates: int = 200
