"""POST /open/game/recordmemory — NPC chats join a session as Type 1 turns (game envelope)."""

from memory_engine.composition import wiring
from memory_engine.edge.http import (
    build_resolver,
    game_error_body,
    lambda_entry,
    log_application_id,
    tenant_of,
)
from memory_engine.models.game import RecordMemoryRequest, RecordMemoryResponse
from memory_engine.usecases import game_record_memory

app = build_resolver(shape_error=game_error_body)


@app.post("/open/game/recordmemory")
def record_game_memory(body: RecordMemoryRequest) -> RecordMemoryResponse:
    log_application_id(app)
    return game_record_memory.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
