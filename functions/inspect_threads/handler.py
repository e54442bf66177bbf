"""GET /v1/inspect/threads?after=&scopes_after=&limit= — a page of the key's sessions by thread,
and a page of its memory-bank scopes with their fact counts."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.inspect import ThreadsResponse
from memory_engine.usecases import inspection

app = build_resolver()


@app.get("/v1/inspect/threads")
def list_threads(
    after: Annotated[str | None, Query(max_length=2048)] = None,
    scopes_after: Annotated[str | None, Query(max_length=256)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> ThreadsResponse:
    return inspection.threads(wiring.engine(), tenant_of(app), after, scopes_after, limit)


lambda_handler = lambda_entry(app)
