"""Builder of the OpenSearch index (Serverless or a managed domain)."""

from __future__ import annotations

from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.errors import Unavailable
from memory_engine.ports import Store
from memory_engine.settings import SearchSettings


def opensearch_index(settings: SearchSettings, store: Store | None = None) -> OpenSearchIndex:
    """The OpenSearch adapter as configured; it sends nothing until first used (the store is not
    needed: OpenSearch outlives the process)."""
    if not settings.opensearch_url:
        raise Unavailable("MEMORY_ENGINE_OPENSEARCH_URL is not set: no OpenSearch index to work with.")
    return OpenSearchIndex(
        settings.opensearch_url,
        index=settings.opensearch_index,
        dimension=settings.embedding_dimension,
        service=settings.opensearch_service,
        region=settings.aws_region,
        engine=settings.opensearch_engine,
        analyzer=settings.opensearch_analyzer,
    )
