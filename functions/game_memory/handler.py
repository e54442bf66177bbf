"""POST /open/game/memory — a session's whole raw history with per-npc counters (game envelope)."""

from memory_engine.composition import wiring
from memory_engine.edge.http import (
    build_resolver,
    game_error_body,
    lambda_entry,
    log_application_id,
    tenant_of,
)
from memory_engine.models.game import GameMemoryRequest, GameMemoryResponse
from memory_engine.usecases import game_memory

app = build_resolver(shape_error=game_error_body)


@app.post("/open/game/memory")
def read_game_memory(body: GameMemoryRequest) -> GameMemoryResponse:
    log_application_id(app)
    return game_memory.run(wiring.engine(), tenant_of(app), body)


lambda_handler = lambda_entry(app)
