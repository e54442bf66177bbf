"""docs/performance.md's Quality part: retrieval on LoCoMo and the Korean set, extraction, fact updates."""

from __future__ import annotations

from bench.entries.entry import Entry
from bench.quality import tables as quality

KOREAN = "--data bench/data/korean/{}.json --no-ablations --no-plot --results bench/results/{}.json"

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
        "python -m bench.quality.fact_updates_llm --replay --answers bench/data/fact_updates_llm",
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
