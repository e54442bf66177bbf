"""Issue #45 through the delete function's handler: the API Gateway event of
`DELETE /v1/engine/delete/` that takes a thread's last turn takes its character registry and
statements record too, on SQLite and on DynamoDB (moto)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from functions.delete.handler import lambda_handler
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.models.statements import StatementRef, ThreadStatements
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.engine import ENGINE_BACKENDS, extract_one_turn, run_worker
from tests.handlers.conftest import load_event

TENANT = "tenant-a"
THREAD = "thread-1"  # extract_one_turn's: session s1, turn d1


@pytest.fixture(params=sorted(ENGINE_BACKENDS))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    with ENGINE_BACKENDS[request.param]() as engine:
        wiring.use(engine)
        yield engine
        wiring.use(None)


def test_the_delete_function_forgets_the_records_of_the_thread_whose_last_turn_it_deletes(
    engine: Engine,
) -> None:
    # Given a thread of one extracted turn, with its character registry and statements record
    extract_one_turn(engine, TENANT, "Mina: I live in Busan.")
    [memory] = run_worker(engine)
    engine.store.save_characters(TENANT, THREAD, {"Mina": ["미나"]})
    stated = StatementRef(
        memory_id=memory.memory_id,
        index=0,
        slot="residence",
        subject="Mina",
        stated_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    assert engine.store.save_statements(ThreadStatements(tenant=TENANT, thread=THREAD, statements=[stated]))

    # When the delete function gets the event deleting that turn
    event = copy.deepcopy(load_event("delete"))
    event["body"] = json.dumps({"session_uuid": "s1", "dialog_uuid": "d1"})
    event["requestContext"]["authorizer"] = {"tenant": TENANT}
    result = lambda_handler(event, LocalContext())

    # Then the turn, its memory and the session went, and the thread's records with them
    assert result["statusCode"] == 200, result["body"]
    assert json.loads(result["body"])["data"]["deleted_memories"] == [memory.memory_id]
    assert engine.store.get_session(TENANT, "s1") is None
    assert engine.store.get_characters(TENANT, THREAD) == {}
    assert engine.store.get_statements(TENANT, THREAD) is None
