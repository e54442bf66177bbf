"""Messages between components: extraction jobs on the queue, embedding calls to the model function."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ExtractionJob(BaseModel):
    """Extract a session's buffered turns. `force` also takes the last, short batch."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    session_uuid: str
    force: bool = False

    def group_id(self) -> str:
        """FIFO message group: one extraction at a time per session."""
        return f"{self.tenant}#{self.session_uuid}"


class EmbeddingInvocation(BaseModel):
    """What the remote embedder sends the embedding function (Lambda invoke or SageMaker body)."""

    texts: list[str] = Field(min_length=1, max_length=256)
    mode: Literal["query", "passage"] = "passage"


class EmbeddingResult(BaseModel):
    """The embedding function's answer: one vector per text, in order."""

    embeddings: list[list[float]]
    dimension: int
