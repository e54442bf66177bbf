"""GET /v1/export?thread=|scope=&cursor= — one page of the key's data as export records."""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, tenant_of
from memory_engine.models.export import MAX_CURSOR_CHARS, Cursor, ExportPage, parse_selection
from memory_engine.usecases import export

app = build_resolver()


@app.get("/v1/export")
def export_page(
    thread: Annotated[str | None, Query(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")] = None,
    scope: Annotated[str | None, Query(max_length=10_000, description='JSON, e.g. {"user_id":"123"}')] = None,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR_CHARS)] = None,
) -> ExportPage:
    selection = parse_selection(thread, scope)
    return export.page(wiring.engine().store, tenant_of(app), selection, Cursor.decode(cursor))


lambda_handler = lambda_entry(app)
