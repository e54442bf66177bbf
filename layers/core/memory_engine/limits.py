"""What the use cases read of the configuration: the thresholds and bounds of their own work.

The engine carries this record, not the whole `Settings` (every adapter's endpoint, table and
timeout): a use case sees the dozen-odd numbers it decides by, each read from its setting once
(`Limits.of`), and a test states the one it changes (`dataclasses.replace`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memory_engine.settings import Settings


@dataclass(frozen=True)
class Limits:
    # When buffered turns become memories (consolidate, delete, fork, the sweep, extract).
    extraction_threshold: int
    batch_size: int
    close_earlier_sessions: bool
    # What embedding may cost: each text's characters, one embed request's.
    embed_max_chars: int
    embed_request_max_chars: int
    # One retrieve: its largest limit, the buffered turns it may embed and analyse.
    retrieve_max_limit: int
    retrieve_embed_budget: int
    retrieve_embed_budget_chars: int
    retrieve_analyse_budget_chars: int
    # Chat and facts.
    chat_model: str | None
    chat_memory_limit: int
    chat_memory_max_chars: int
    fact_language: str | None
    # Jobs: deliveries and backoff, how long one stays in hand, when an extraction job yields
    # (`job_seconds` is infinite in a Lambda, where the function's time left decides).
    worker_max_receives: int
    worker_retry_base_seconds: float
    worker_retry_max_seconds: float
    job_visibility_seconds: float
    job_seconds: float
    extraction_job_max_chars: int

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            extraction_threshold=settings.extraction_threshold,
            batch_size=settings.batch_size,
            close_earlier_sessions=settings.close_earlier_sessions,
            embed_max_chars=settings.embed_max_chars,
            embed_request_max_chars=settings.embed_request_max_chars,
            retrieve_max_limit=settings.retrieve_max_limit,
            retrieve_embed_budget=settings.retrieve_embed_budget,
            retrieve_embed_budget_chars=settings.retrieve_embed_budget_chars,
            retrieve_analyse_budget_chars=settings.retrieve_analyse_budget_chars,
            chat_model=settings.chat_model,
            chat_memory_limit=settings.chat_memory_limit,
            chat_memory_max_chars=settings.chat_memory_max_chars,
            fact_language=settings.fact_language,
            worker_max_receives=settings.worker_max_receives,
            worker_retry_base_seconds=settings.worker_retry_base_seconds,
            worker_retry_max_seconds=settings.worker_retry_max_seconds,
            job_visibility_seconds=settings.job_visibility_seconds,
            job_seconds=math.inf if settings.in_lambda else settings.worker_job_seconds,
            extraction_job_max_chars=settings.extraction_job_max_chars,
        )
