"""The inspector's session listing on DynamoDB: a Query of the sparse gsi4, never a Scan, and the
sessions written before gsi4 existed listed by `memory-engine backfill-sessions` or their next turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.composition import wiring
from memory_engine.settings import reset_settings
from memory_engine_app import cli
from tests.aws.conftest import AwsCalls
from tests.contract.builders import TENANT, append_turns, make_session
from tests.fakes.aws import REGION, create_queue, create_table, moto_aws


@pytest.fixture
def store() -> Iterator[DynamoDbStore]:
    with moto_aws():
        yield DynamoDbStore(create_table(), REGION)


def unlist(store: DynamoDbStore, session_uuid: str) -> None:
    """Make a session look as one written before gsi4 existed."""
    store.table.client.update_item(
        TableName=store.table.name,
        Key=keys.key(keys.session_pk(TENANT, session_uuid), keys.SESSION_SK),
        UpdateExpression="REMOVE gsi4pk, gsi4sk",
    )


def listed(store: DynamoDbStore) -> list[str]:
    return [session.session_uuid for session in store.list_sessions(TENANT)]


def test_listing_the_sessions_queries_the_index_and_never_scans(store: DynamoDbStore) -> None:
    # Given 120 sessions of the tenant (more than one BatchGetItem takes)
    for number in range(120):
        append_turns(store, make_session(f"s-{number:03d}"), f"d-{number}")
    calls = AwsCalls()
    calls.watch("dynamodb")
    # When they are listed
    found = listed(store)
    # Then all are there, read by a Query of gsi4 and the items in batches, with no Scan
    assert found == sorted(f"s-{number:03d}" for number in range(120))
    assert calls.of("dynamodb") == {"Query": 1, "BatchGetItem": 2}


def test_a_session_written_before_the_index_is_listed_once_backfilled(store: DynamoDbStore) -> None:
    # Given two sessions, one as it was stored before gsi4 existed
    append_turns(store, make_session("old"), "d1")
    append_turns(store, make_session("new"), "d2")
    unlist(store, "old")
    assert listed(store) == ["new"]
    # When the backfill runs (twice: it is idempotent)
    assert store.backfill_session_listing() == 1
    assert store.backfill_session_listing() == 0
    # Then both are listed
    assert listed(store) == ["new", "old"]


def test_a_session_written_before_the_index_is_listed_from_its_next_turn(store: DynamoDbStore) -> None:
    append_turns(store, make_session("old"), "d1")
    unlist(store, "old")
    append_turns(store, make_session("old"), "d2")
    assert listed(store) == ["old"]


def test_the_backfill_command_lists_the_old_sessions_of_the_configured_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with moto_aws():
        # Given a deployed table holding a session from before the index
        table = create_table()
        store = DynamoDbStore(table, REGION)
        append_turns(store, make_session("old"), "d1")
        unlist(store, "old")
        for name, value in {
            "MEMORY_ENGINE_BACKEND": "aws",
            "MEMORY_ENGINE_TABLE_NAME": table,
            "MEMORY_ENGINE_QUEUE_URL": create_queue(),
            "AWS_REGION": REGION,
        }.items():
            monkeypatch.setenv(name, value)
        reset_settings()
        wiring.reset()
        try:
            # When the operator runs the upgrade step
            code = cli.main(["backfill-sessions"])
        finally:
            reset_settings()
            wiring.reset()
        # Then it says how many it listed, and the inspector sees the session
        assert code == 0
        assert "listed 1 sessions" in capsys.readouterr().err
        assert listed(store) == ["old"]
