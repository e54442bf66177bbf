"""DELETE /v1/users/{userid}/memory — everything remembered about a chat user."""

from memory_engine.composition import wiring
from memory_engine.edge.http import build_resolver, lambda_entry, openai_error_body, tenant_of
from memory_engine.models.chat import UserMemoryDeleted
from memory_engine.usecases import forget_user

app = build_resolver(shape_error=openai_error_body)


@app.delete("/v1/users/<userid>/memory")
def delete_user_memory(userid: str) -> UserMemoryDeleted:
    return forget_user.run(wiring.engine(), tenant_of(app), userid)


lambda_handler = lambda_entry(app)
