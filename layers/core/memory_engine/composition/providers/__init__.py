"""The factory maps: for each kind of adapter, which builder each value of its setting names.

Adding a provider is one builder (a function of the settings, in the module of this package for
its family) and one entry here; nothing else chooses. Each module loads only when one of its
values is chosen, so choosing `local` never imports boto3 and `builtin` never imports openai.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_engine.composition.factory import Factory

if TYPE_CHECKING:
    from memory_engine.extraction.fact_extractor import FactExtractor
    from memory_engine.ports import (
        ChatUpstream,
        Embedder,
        Extractor,
        KeyStore,
        Queue,
        SearchIndex,
        Store,
        UsagePlanKeys,
    )

_LOCAL = "memory_engine.composition.providers.local"
_AWS = "memory_engine.composition.providers.aws"
_OPENSEARCH = "memory_engine.composition.providers.opensearch"
_EMBEDDERS = "memory_engine.composition.providers.embedders"
_EXTRACTORS = "memory_engine.composition.providers.extractors"
_LLM = "memory_engine.composition.providers.llm"

STORES: Factory[Store] = Factory(
    "store", "MEMORY_ENGINE_BACKEND", {"local": f"{_LOCAL}:sqlite_store", "aws": f"{_AWS}:dynamodb_store"}
)
QUEUES: Factory[Queue] = Factory(
    "queue", "MEMORY_ENGINE_BACKEND", {"local": f"{_LOCAL}:sqlite_queue", "aws": f"{_AWS}:sqs_queue"}
)
KEY_STORES: Factory[KeyStore] = Factory(
    "key store", "MEMORY_ENGINE_BACKEND", {"local": f"{_LOCAL}:sqlite_keys", "aws": f"{_AWS}:dynamodb_keys"}
)
USAGE_PLANS: Factory[UsagePlanKeys] = Factory(
    "usage plan",
    "MEMORY_ENGINE_BACKEND",
    {"local": f"{_LOCAL}:no_usage_plan", "aws": f"{_AWS}:apigateway_usage_plan"},
)
# Keyed by `wiring.index_choice`. The local backend's persisted index ("files") is opened by the
# local server and its CLI (memory_engine_app.local_index): it never runs in a Lambda function.
INDEXES: Factory[SearchIndex] = Factory(
    "search index",
    "MEMORY_ENGINE_INDEX",
    {
        "opensearch": "memory_engine.composition.providers.opensearch:opensearch_index",
        "memory": f"{_LOCAL}:rebuilt_index",
    },
    elsewhere={
        "files": "The local backend's index files (MEMORY_ENGINE_INDEX=files) are opened by the "
        "local server and its CLI (memory-engine serve), which build their own engine; set "
        "MEMORY_ENGINE_INDEX=opensearch with MEMORY_ENGINE_OPENSEARCH_URL, or memory."
    },
)
EMBEDDERS: Factory[Embedder] = Factory(
    "embedding model",
    "MEMORY_ENGINE_EMBEDDER",
    {
        "e5": f"{_EMBEDDERS}:e5",
        "minilm": f"{_EMBEDDERS}:minilm",
        "gemma": f"{_EMBEDDERS}:gemma",
        "lambda": f"{_EMBEDDERS}:lambda_function",
        "sagemaker": f"{_EMBEDDERS}:sagemaker_endpoint",
    },
)
EXTRACTORS: Factory[Extractor] = Factory(
    "extractor",
    "MEMORY_ENGINE_EXTRACTOR",
    {"builtin": f"{_EXTRACTORS}:builtin", "llm": f"{_LLM}:llm_extractor"},
)
FACT_EXTRACTORS: Factory[FactExtractor] = Factory(
    "fact extractor",
    "MEMORY_ENGINE_EXTRACTOR",
    {"builtin": f"{_EXTRACTORS}:builtin_facts", "llm": f"{_LLM}:llm_extractor"},
)
# One provider today: any OpenAI-compatible endpoint (OPENAI_BASE_URL); a second is one entry.
CHATS: Factory[ChatUpstream] = Factory(
    "chat model", "OPENAI_BASE_URL", {"openai": "memory_engine.composition.providers.chat:chat_upstream"}
)
