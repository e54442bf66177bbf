"""Queue messages: what consolidate (and delete, fork) hand to the extraction worker."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ExtractionJob(BaseModel):
    """Extract a session's buffered turns. `force` also takes the last, short batch."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    session_uuid: str
    force: bool = False

    def group_id(self) -> str:
        """FIFO message group: one extraction at a time per session."""
        return f"{self.tenant}#{self.session_uuid}"
