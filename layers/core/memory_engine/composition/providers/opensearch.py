"""Builder of the OpenSearch index (Serverless or a managed domain), with its own settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.errors import Unavailable
from memory_engine.ports import Store
from memory_engine.settings import Piece, SearchSettings


class OpenSearchSettings(Piece):
    """What only the OpenSearch index reads, when it is the chosen index."""

    opensearch_service: Literal["aoss", "es"] = "aoss"
    opensearch_index: str = Field("memories", min_length=1)
    opensearch_engine: Literal["faiss", "lucene"] = "faiss"
    opensearch_analyzer: Literal["nori", "cjk", "standard"] = "nori"


def opensearch_index(settings: SearchSettings, store: Store | None = None) -> OpenSearchIndex:
    """The OpenSearch adapter as configured; it sends nothing until first used (the store is not
    needed: OpenSearch outlives the process)."""
    if not settings.opensearch_url:
        raise Unavailable("MEMORY_ENGINE_OPENSEARCH_URL is not set: no OpenSearch index to work with.")
    own = OpenSearchSettings()
    return OpenSearchIndex(
        settings.opensearch_url,
        index=own.opensearch_index,
        dimension=settings.embedding_dimension,
        service=own.opensearch_service,
        region=settings.aws_region,
        engine=own.opensearch_engine,
        analyzer=own.opensearch_analyzer,
    )
