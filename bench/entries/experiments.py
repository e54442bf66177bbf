"""docs/performance.md's Experiments part: measurements that inform a setting or a cost, not a target."""

from __future__ import annotations

from bench.entries.entry import Entry
from bench.experiments import tables as experiments

EXPERIMENTS = (
    Entry(
        "candidate_counts",
        "Candidates per retriever",
        "Each question's evidence gathered once at 200 candidates per retriever and kind, cut to what the"
        " index hands over at fewer, and ranked again (LoCoMo dev and the Korean set; the objective is the"
        " mean of R@5, R@10 and NDCG@10 over categories 1–4, differences under 0.003 are noise). The shipped"
        " counts are 60 turns and 30 memories. A retrieve asks the index for at least 4 × its limit, so the"
        " LoCoMo harness (limit 50) ranks 200 candidates: a caller asking for 5 hits ranks as the 60-turn"
        " rows do.",
        "python -m bench.experiments.candidate_counts",
        experiments.candidate_counts,
    ),
    *(
        Entry(
            f"forming_loss_{embedder}",
            f"Why a forming state loses recall, {label}",
            "The forming benchmark's candidates captured once per state (`forming_power capture`) and"
            " replayed: at each middle state, the questions whose R@10 falls below both ends, by where"
            " their gold turns are (all buffered, all in memories, both) and what put them out of the"
            " first ten places; then re-scorings of the same candidates (R@10 per state, the issue 41"
            " target judged per split: no state more than 0.02 below the lower end)"
            " ([research/retrieval.md](research/retrieval.md)).",
            f"python -m bench.experiments.forming_loss variants --out <captures> --save {embedder}",
            experiments.forming_loss,
        )
        for embedder, label in (("gemma", "EmbeddingGemma"), ("e5", "e5"))
    ),
    Entry(
        "opensearch_payload",
        "OpenSearch hits on the wire",
        "The `_msearch` response of one retrieve at the default sizes, with vectors as numbers and as float16"
        " copies: bytes, and the time to read them (no cluster).",
        "python -m bench.experiments.opensearch_payload",
    ),
    Entry(
        "llm_prompt_tokens",
        "Tokens per LLM extraction batch",
        "The real prompt of every 8-turn LoCoMo batch and an estimated answer, counted offline.",
        "python -m bench.experiments.llm_prompt_tokens",
    ),
    Entry(
        "cost_estimate",
        "AWS cost estimate",
        "A month of the AWS deployment for a small and a large tenant, from list prices and assumed usage (an"
        " estimate, not a bill; [aws.md](aws.md#what-it-costs)).",
        "python -m bench.experiments.cost_estimate",
        experiments.cost,
    ),
)
