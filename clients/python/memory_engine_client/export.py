"""The export route (`GET /v1/export`, docs/export.md) as a call: one page of the key's records."""

from __future__ import annotations

import json

from memory_engine_client.call import Call, reader
from memory_engine_client.models import ExportPage


def export_page(
    *, thread: str | None = None, scope: dict[str, str] | None = None, cursor: str | None = None
) -> Call[ExportPage]:
    """A page of the key's data (a thread's, or a scope's facts, when named); pass `next_cursor`
    as `cursor` for the next page, until a page comes without one."""
    params: dict[str, str | int] = {}
    if thread is not None:
        params["thread"] = thread
    if scope is not None:
        params["scope"] = json.dumps(scope, ensure_ascii=False)
    if cursor is not None:
        params["cursor"] = cursor
    return Call("GET", "/v1/export", reader(ExportPage), params=params)
