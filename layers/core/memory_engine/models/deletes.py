"""A delete in flight: recorded before its first change and removed after its last, so a
process that dies between them never leaves a half-written state for good.

A delete writes in several steps (the facts its memory replaced reopened, the store's removal,
the thread's statements record, the index purge; `usecases/delete.py`, `usecases/bank.py`,
`usecases/forget_user.py`, the sweep's expiry in `usecases/sweep.py`).
Each step run again changes nothing, so finishing a delete is running it again. The caller's
retry does; when none comes, the sweep finishes every delete begun more than a few minutes ago
(`usecases/delete_intents.py`). What identifies a delete is its request: the route, the tenant,
the session it named and the dialog uuid, memory id or userid it named (`key`); an expiry's
target is a token of its run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from memory_engine.models.base import Model

# The route a delete came through: the engine's (`DELETE /v1/engine/delete/`, a dialog uuid or
# a memory id of the session), the memory bank's (`DELETE /v1/memories/{id}`), forgetting a chat
# user (`DELETE /v1/users/{userid}/memory` and its queued second pass: the userid), or the sweep's
# removal of expired memories (their own expiry or their tenant's retention, with the raw turns
# the retention removes after them: a token of that run).
DeleteRoute = Literal["engine", "bank", "user", "expiry"]


class DeleteIntent(Model):
    """One delete begun and not yet known finished."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    route: DeleteRoute
    session_uuid: str = ""  # the session the request named (none for the bank's)
    target: str  # the dialog uuid or memory id the request named
    # The thread of what it removes, and the memories it removes: what finishing it does once they
    # are gone (their statements taken out of the thread's record, their documents purged).
    thread: str = ""
    memory_ids: list[str] = Field(default_factory=list)
    # An expiry's: the session of each memory it removes that had one, and the turns each such
    # session's memories were made of (what the tenant's retention removes once they went).
    sessions: dict[str, str] = Field(default_factory=dict)
    dialogs: dict[str, list[str]] = Field(default_factory=dict)
    begun: datetime

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What one delete is, begun again or not: a later begin of the same key replaces it."""
        return self.tenant, self.route, self.session_uuid, self.target
