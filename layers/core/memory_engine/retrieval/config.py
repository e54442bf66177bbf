"""What retrieval indexes and how it ranks: one measured default, variants for the benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_engine.retrieval.fusion import FusionWeights
from memory_engine.retrieval.text import mostly_korean

# The measured default (bench/locomo/tune.py: chosen on the dev split, cross-validated by leaving
# each conversation out; docs/retrieval.md): the dense share of a turn's score and its window's
# share of the cosine, the date and speaker bonuses, the memory document's BM25 and cosine, and
# the handicap that offsets it against raw buffered turns.
DEFAULT_WEIGHTS = FusionWeights(
    turn_dense=0.95,
    # The grid's tie-break says 0.25; 0.5 is level on dev, costs the same and is ahead on the
    # project's Korean and English sets (docs/retrieval.md, Cross-validation).
    turn_window=0.5,
    turn_date=0.1,
    turn_speaker=0.05,
    memory_lexical=0.25,
    memory_dense=0.25,
    memory_handicap=0.0,
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
    # How much of the lexical terms (BM25 and the speaker match) a Korean question keeps
    # (FusionWeights.with_lexical_share).
    # Measured on the project's Korean set (docs/korean.md): every share above 0 ranked worse in
    # both of its conversations, while the same facts in English lose without BM25, and LoCoMo
    # (English) chose its weights with it. Lexical candidates still join the pool either way.
    korean_lexical_share: float = 0.0
    # Candidates per retriever (dense and lexical) asked of the index, per document kind. Turns:
    # 100 ranks LoCoMo dev as 200 did (R@10 0.7240 against 0.7249, R@5 0.6110 against 0.6083,
    # replayed over the same candidates; the Korean set identical), for fewer hits to build and
    # fuse: -13 % CPU per retrieve at 100k memories (docs/performance.md).
    memory_candidates: int = 50
    turn_candidates: int = 100

    @property
    def window_vectors(self) -> bool:
        """Whether extraction embeds each turn's window for its turn document (only when the
        weights use it: a window costs about a turn's embedding again, three turns long)."""
        return self.turn_documents and self.weights.turn_window > 0

    def weights_for(self, query: str) -> FusionWeights:
        """The fusion weights for one question: the default's, with the Korean lexical share when
        most of its words are Korean."""
        if mostly_korean(query):
            return self.weights.with_lexical_share(self.korean_lexical_share)
        return self.weights
