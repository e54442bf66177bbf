"""The inspector's session listing on DynamoDB: a Query of the sparse gsi4, never a Scan, and the
sessions written before gsi4 existed listed by `memory-engine backfill-sessions` or their next turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws import dynamodb_sessions
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


# -- whether a thread still has a session (gsi4 is eventually consistent) ---------------------------


def test_a_session_the_listing_still_shows_after_its_delete_is_not_counted(
    store: DynamoDbStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a listing that still shows a session of the thread deleted an instant ago (gsi4 lags
    # the table) before the thread's one stored session
    append_turns(store, make_session("kept"), "d1")
    stale = {
        **keys.key(keys.session_pk(TENANT, "deleted"), keys.SESSION_SK),
        keys.GSI4_PK: {"S": keys.tenant_sessions(TENANT)},
        keys.GSI4_SK: {"S": keys.session_listing_sk("thread-1", "deleted")},
    }
    query = store.table.query

    def lagging(**arguments: Any) -> Iterator[dict[str, Any]]:
        if arguments.get("IndexName") == keys.GSI4:
            yield stale
        yield from query(**arguments)

    monkeypatch.setattr(store.table, "query", lagging)
    # Then the stored session counts, and the deleted one alone does not
    assert store.thread_has_sessions(TENANT, "thread-1")
    store.delete_dialog(TENANT, "kept", "d1")
    assert not store.thread_has_sessions(TENANT, "thread-1")


def test_a_thread_whose_own_session_lies_past_the_probe_is_taken_to_have_one(
    store: DynamoDbStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given more sessions of threads that continue this one's name than the probe reads
    monkeypatch.setattr(dynamodb_sessions, "_THREAD_PROBE_KEYS", 3)
    monkeypatch.setattr(dynamodb_sessions, "_THREAD_PROBE_PAGE", 2)
    for number in range(3):
        append_turns(store, make_session(f"s{number}", parent=f"thread-1#{number}"), f"d{number}")
    # Then the thread is taken to have one: its records are kept rather than forgotten on a guess
    assert store.thread_has_sessions(TENANT, "thread-1")
    assert not store.thread_has_sessions(TENANT, "thread-2")
