"""What retrieval indexes and how it ranks: one measured default, variants for the benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_engine.retrieval.fusion import Weights, with_lexical_share
from memory_engine.retrieval.text import mostly_korean

# The measured default (bench/quality/locomo/tune.py: chosen on the dev split, cross-validated by leaving
# each conversation out; docs/retrieval.md): feature name -> the weight its value is multiplied by
# (retrieval.features names the features). A turn's cosine counts 0.95 (its own and its window's
# alike, `window_share` splitting it between them) against its normalised BM25's 0.05; then the
# date and speaker bonuses, the memory document's BM25 and cosine, and the handicap that offsets
# a memory against raw buffered turns.
DEFAULT_WEIGHTS: dict[str, float] = {
    "dense": 0.95,
    "window": 0.95,
    "lexical": 0.05,
    "date": 0.1,
    "speaker": 0.05,
    "memory": 0.25,
    "memory_dense": 0.25,
    "handicap": 0.0,
}
# The grid's tie-break says 0.25; 0.5 is level on dev, costs the same and is ahead on the
# project's Korean and English sets (docs/retrieval.md, Cross-validation).
DEFAULT_WINDOW_SHARE = 0.5
# The weights shipped before evidence-ordered hits (kept for the benchmark's comparison row, which
# also sets `window_share` to 0: there were no window vectors then).
PREVIOUS_WEIGHTS: dict[str, float] = {
    "dense": 0.8,
    "window": 0.8,
    "lexical": 0.2,
    "date": 0.3,
    "speaker": 0.0,
    "memory": 1.0,
    "memory_dense": 0.0,
    "handicap": 0.8,
}


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
    weights: Weights = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    # How much of a turn's cosine comes from its window's vector where it has one (the rest from
    # its own): `retrieval.features.turn_candidates`.
    window_share: float = DEFAULT_WINDOW_SHARE
    # A buffered turn is its own unit, and its own text stands for that unit's document: it gets
    # the memory-document features from its own cosine and BM25 (`retrieval.features`), so that a
    # memory's document parts, which a buffered turn cannot have, do not decide the order by their
    # absence (issue 41: a fresh session's facts were found 0 of 6 beside extracted memories).
    own_document: bool = True
    # One lexical scale for every source while some turns are buffered: indexed turns take their
    # BM25 from the same pool as the buffered turns (`usecases.retrieve`), and the memory
    # documents' BM25 (relative to the best memory document) is scaled by the memory side's best
    # turn's share of that pool's best (`retrieval.features.memory_candidates`). Otherwise the
    # best of a few memories counts as a full lexical match however weakly it matched, and a
    # memory, which fills as many places as it has turns, displaces buffered answers (issue 41:
    # LoCoMo with a quarter of its sessions extracted, R@10 0.587 against 0.706 all buffered).
    # No effect when nothing is buffered or nothing is extracted.
    one_lexical_scale: bool = True
    # A buffered turn's window cosine from its own and its neighbours' vectors (usecases.retrieve),
    # so the window part is defined for every turn, not only for extracted ones.
    buffered_windows: bool = True
    # A buffered turn's own-document BM25 from its batch: each session's buffered turns cut into
    # runs of the extraction's `batch_size` (the memory each run will become), each run scored as
    # one document over the thread's runs, divided by the best run and multiplied by the buffered
    # side's lexical share of the pool to `batch_share_power` (the memory documents' scaling,
    # mirrored). A memory's document holds its whole batch of dialogue, a buffered turn only its
    # line: beside memories the answers still buffered lost the memory documents' BM25 part
    # (issue 41). Replayed over the forming benchmark's captures of all six LoCoMo dev
    # conversations (bench/experiments/forming_batches.py, docs/research/retrieval.md), R@10 all
    # buffered 0.695 -> 0.752 with e5 and 0.791 -> 0.825 with EmbeddingGemma, every middle state up.
    buffered_batches: bool = True
    batch_share_power: float = 1.0
    # The memory-document BM25 weight while a question has both buffered and extracted candidates
    # (a thread whose newest turns are still buffered); None: the weights' own, always.
    forming_memory_weight: float | None = None
    # The power of that share a memory document's BM25 is multiplied by (1: the share itself).
    # Measured, not derived: replayed over the forming benchmark's candidates of all six LoCoMo dev
    # conversations at 25 % extracted (bench/quality/locomo/forming_tune.py), chosen on conv-26/30/41
    # and checked on conv-42/43/44, R@10 rose from 1 to a plateau at 2 to 6 (held-out 0.638 at 1,
    # 0.659 at 2, 0.660 at 6); 2 is the smallest on it. No effect where the share is 1 (nothing
    # buffered, nothing extracted, or the memory side holds the best match) (docs/retrieval.md).
    memory_share_power: float = 2.0
    # How much of the lexical terms (BM25 and the speaker match) a Korean question keeps
    # (fusion.with_lexical_share).
    # Measured on the project's Korean set (docs/korean.md): every share above 0 ranked worse in
    # both of its conversations, while the same facts in English lose without BM25, and LoCoMo
    # (English) chose its weights with it. Lexical candidates still join the pool either way.
    korean_lexical_share: float = 0.0
    # Candidates per retriever (dense and lexical) asked of the index, per document kind: what a
    # retrieve costs grows with them (~300 hits built and fused at 50/100), not what it finds.
    # Replayed over the same gathered evidence (bench/experiments/candidate_counts.py), 60 turns
    # and 30 memories rank LoCoMo dev within the tuning's noise of 100/50 and of 200/200 (objective
    # 0.6429 against 0.6449 and 0.6458; noise 0.003), the Korean set identical; memory counts down
    # to 20 change nothing in either set, turn counts below 60 cost R@5 (0.6116 at 50).
    memory_candidates: int = 30
    turn_candidates: int = 60

    @property
    def window_vectors(self) -> bool:
        """Whether extraction embeds each turn's window for its turn document (only when the
        weights use it: a window costs about a turn's embedding again, three turns long)."""
        return self.turn_documents and self.window_share > 0

    def weights_for(self, query: str) -> Weights:
        """The fusion weights for one question: the default's, with the Korean lexical share when
        most of its words are Korean."""
        if mostly_korean(query):
            return with_lexical_share(self.weights, self.korean_lexical_share)
        return self.weights


# Defaults per embedder (MEMORY_ENGINE_EMBEDDER): the weights that suit each model's dense signal,
# each tuned with bench/quality/locomo/tune.py on that model's vectors (docs/retrieval.md,
# "Per embedder"). An embedder not named here (e5, MiniLM, the remote ones, which serve e5 by
# default) ranks with the measured default above. The one map: `for_embedder` reads nothing else.
PROFILES: dict[str, dict[str, object]] = {}


def for_embedder(embedder: str) -> RetrievalConfig:
    """The retrieval configuration an engine embedding with `embedder` ranks with."""
    profile = PROFILES.get(embedder)
    return RetrievalConfig(**profile) if profile else RetrievalConfig()  # type: ignore[arg-type]
