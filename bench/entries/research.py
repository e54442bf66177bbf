"""The decided A/B comparisons: docs/research/comparisons.md, dated, never marked stale."""

from __future__ import annotations

from bench.entries.entry import Entry
from bench.quality import tables as quality
from bench.speed import tables as speed

# The A/B runs that decided a change, each against a past checkout: history, not current figures.
# `bench.report` writes them to docs/research/comparisons.md, dated, and never marks them stale.
RESEARCH = (
    Entry(
        "index_ab",
        "The local index against the one it replaced",
        "The local index as it ships (tantivy, numpy files and usearch graphs; 60 turn and 30 memory "
        "candidates) against the hand-written one it replaced with that checkout's own settings (main at "
        "874d17d: 100 and 50 candidates, voyager graphs), interleaved round by round on the same generated "
        "documents: retrieve latency and CPU per call, index load and first answer, resident memory, and "
        "the cost of a write. Each checkout ran with its own candidate counts, so the latency rows compare "
        "two configurations rather than two indexes: at equal counts the new index was the slower at 100k "
        "(p95 31.1 against 24.8 ms, as issue 46 reports); the counts were cut because the ranking held "
        "([speed.md](speed.md#the-local-index-on-libraries-issue-36)).",
        "python -m bench.speed.index_ab --baseline ../old-checkout --sizes 10000 100000 --rounds 3",
        speed.index_ab,
    ),
    Entry(
        "graph_ab",
        "HNSW graphs: usearch float16 against voyager float32",
        "The local index with its HNSW graphs on usearch in float16 against the same index on voyager in "
        "float32 (main at 7597791, its search beams set to the same max(225, 7.5 × k)), interleaved round by "
        "round on the same generated documents "
        "(`index_ab`'s measures): retrieve latency and CPU per call, index load and first answer, resident "
        "memory, and the cost of a write.",
        "python -m bench.speed.index_ab --baseline <a worktree of main before> --sizes 10000 100000 "
        "--rounds 3 --name graph_ab, then --sizes 100000 --rounds 5 --keep --name graph_ab",
        speed.index_ab,
    ),
    Entry(
        "graph_beam",
        "The HNSW search beam",
        "Per document kind at 100k memories: ANN recall@10 of the dense candidates against an exact scan of "
        "the same vectors, and the graph query's time, for each search beam (max(ef_search, ef_factor × k)). "
        "It chose the beam in use (225 for memories, 450 for turns: max(225, 7.5 × k)), the narrowest whose "
        "recall@10 stays at or above 0.98 by more than the sampling noise "
        "([speed.md](speed.md#the-local-index-on-libraries-issue-36)); the ANN recall of today's index is "
        "`retrieve_latency`'s, measured with every index change, so this sweep is history.",
        "python -m bench.speed.graph_beam",
    ),
    Entry(
        "lexical_ab",
        "The local index's lexical half: tantivy against SQLite FTS5",
        "The second candidate of issue 36 (bench/experiments/fts5_lexical.py, not in production): the "
        "retrieve fixture's documents written into both lexical halves, then the LoCoMo dev questions "
        "searched as a retrieve's lexical half does (both kinds, k 50 and 100, with 50/100 named documents), "
        "interleaved round by round; build time, resident memory and disk, a 3-memory write, and the top-10 "
        "overlap (ratios: FTS5 over tantivy).",
        "python -m bench.experiments.lexical_ab --sizes 10000 100000 --rounds 3",
    ),
    Entry(
        "locomo_tuning",
        "Fusion weights",
        "The fusion weights chosen on the dev split by grid search, cross-validated by leaving one "
        "conversation out: the point chosen is the one that ships (`retrieval.config.DEFAULT_WEIGHTS`). "
        "Recorded before results kept their commit; what each weight does on today's code is measured by "
        "`locomo_retrieval`'s ablation rows, re-run with every ranking change, so this search is history.",
        "python -m bench.quality.locomo.tune",
        quality.tuning,
    ),
    Entry(
        "locomo_tuning_gemma",
        "Fusion weights for EmbeddingGemma",
        "The same search on EmbeddingGemma's vectors (float32, 768), on LoCoMo dev's first two "
        "conversations (the others' Gemma vectors were not computed), around the shipped weights: whether "
        "its profile should differ ([retrieval.md](retrieval.md#per-embedder)). It decided that Gemma ranks "
        "with "
        "the shipped weights (nothing chosen on one conversation beat them on the other); the ranking has "
        "changed since (one lexical scale, the squared memory share), so it is history, and "
        "`locomo_retrieval_gemma` measures Gemma on today's ranking.",
        "MEMORY_ENGINE_EMBEDDER=gemma MEMORY_ENGINE_EMBEDDING_MODEL_DIR=... "
        "python -m bench.quality.locomo.tune "
        '--conversations 2 --out bench/results/locomo_tuning_gemma.json --grid \'{"dense": [0.9, 0.95, 1.0], '
        '"window_share": [0.25, 0.5], "date": [0.1], "speaker": [0.05], "memory": [0.1, 0.15, 0.25], '
        '"memory_dense": [0.1, 0.25], "handicap": [0.0, 0.1]}\'',
        quality.tuning,
    ),
)
