"""GET /v1/inspect/session?session_uuid= — a session's turns in order and its memories."""

from memory_engine.composition import wiring
from memory_engine.edge.http import QueryId, build_resolver, lambda_entry, tenant_of
from memory_engine.models.inspect import SessionResponse
from memory_engine.usecases import inspection

app = build_resolver()


@app.get("/v1/inspect/session")
def show_session(session_uuid: QueryId) -> SessionResponse:
    return inspection.session(wiring.engine(), tenant_of(app), session_uuid)


lambda_handler = lambda_entry(app)
