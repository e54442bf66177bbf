"""GET /v1/inspect/memories?thread=&after=&limit= — a page of a thread's memories, every field."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from memory_engine.composition import wiring
from memory_engine.edge.http import QueryId, build_resolver, lambda_entry, tenant_of
from memory_engine.models.inspect import MemoriesResponse
from memory_engine.usecases import inspection

app = build_resolver()


@app.get("/v1/inspect/memories")
def list_memories(
    thread: QueryId,
    after: Annotated[str | None, Query(max_length=256)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> MemoriesResponse:
    return inspection.memories(wiring.engine(), tenant_of(app), thread, after, limit)


lambda_handler = lambda_entry(app)
