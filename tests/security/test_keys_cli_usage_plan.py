"""`memory-engine keys ...` with the AWS backend (DynamoDB and API Gateway on moto): every working key
has exactly one usage-plan key, the one the authorizer names as the request's usage identifier."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from functions.authorizer.handler import lambda_handler as authorizer
from memory_engine.adapters.aws import clients
from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore
from memory_engine.composition import key_wiring, wiring
from memory_engine.edge.auth import key_id_of, usage_key_value
from memory_engine.ports.clock import SystemClock
from memory_engine.settings import reset_settings
from memory_engine.usecases import keys
from memory_engine_app import cli
from memory_engine_app.server.apigw import LocalContext
from tests.contract.moto_keys import (
    REGION,
    api_key_values,
    mocked_key_table,
    mocked_usage_plan,
    usage_plan_values,
)
from tests.handlers.conftest import load_event


@dataclass
class Aws:
    table: str
    dynamodb: Any
    apigateway: Any
    plan_id: str

    def plan(self) -> set[str]:
        return usage_plan_values(self.apigateway, self.plan_id)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Aws]:
    """The CLI configured as docs/aws.md's deploy steps say: table, queue and usage plan of a stack."""
    with mocked_key_table() as (table, dynamodb):
        plan_id, apigateway = mocked_usage_plan()
        monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "aws")
        monkeypatch.setenv("MEMORY_ENGINE_TABLE_NAME", table)
        monkeypatch.setenv("MEMORY_ENGINE_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/1/q.fifo")
        monkeypatch.setenv("MEMORY_ENGINE_USAGE_PLAN_ID", plan_id)
        monkeypatch.setenv("AWS_REGION", REGION)
        reset_settings()
        wiring.reset()
        clients.forget_clients()
        yield Aws(table, dynamodb, apigateway, plan_id)
    reset_settings()
    wiring.reset()
    clients.forget_clients()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def create(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run(capsys, "keys", "create", "--tenant", "acme")
    assert code == 0
    return out.strip()


def usage_identifier(key: str) -> str:
    event = copy.deepcopy(load_event("authorizer"))
    event["headers"]["Authorization"] = f"Bearer {key}"
    return str(authorizer(event, LocalContext())["usageIdentifierKey"])


def test_a_created_key_is_in_the_usage_plan_under_the_identifier_the_authorizer_names(
    aws: Aws, capsys: pytest.CaptureFixture[str]
) -> None:
    # When a key is created
    key = create(capsys)
    # Then the usage plan holds one API key: the one the authorizer names for requests with it
    assert aws.plan() == {usage_identifier(key)} == {usage_key_value(str(key_id_of(key)))}


def test_revoking_a_key_deletes_its_usage_plan_key(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    key = create(capsys)

    code, _, _ = run(capsys, "keys", "revoke", str(key_id_of(key)))

    assert code == 0
    assert aws.plan() == set() and api_key_values(aws.apigateway) == set()


def test_rotating_a_key_moves_the_usage_plan_key_to_the_new_key(
    aws: Aws, capsys: pytest.CaptureFixture[str]
) -> None:
    old = create(capsys)

    code, out, _ = run(capsys, "keys", "rotate", str(key_id_of(old)))

    assert code == 0
    assert aws.plan() == {usage_key_value(str(key_id_of(out.strip())))}


def test_without_the_usage_plan_id_no_key_is_issued(
    aws: Aws, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the AWS backend with no usage plan configured
    monkeypatch.delenv("MEMORY_ENGINE_USAGE_PLAN_ID")
    reset_settings()
    wiring.reset()
    # When a key is created / Then the command fails naming the variable, and nothing is stored
    code, out, err = run(capsys, "keys", "create", "--tenant", "acme")
    assert code == 1 and out == ""
    assert "MEMORY_ENGINE_USAGE_PLAN_ID" in err and "UsagePlanId" in err
    assert key_wiring.key_store().list_keys() == []


def test_sync_enrolls_keys_made_before_the_usage_plan(aws: Aws, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a key issued with no usage plan (before this version, say)
    store = DynamoDbKeyStore(aws.table, REGION, dynamodb=aws.dynamodb)
    issued = keys.create(store, SystemClock().now(), "acme")
    # When the plan is synced, first dry
    _, dry, _ = run(capsys, "keys", "sync", "--dry-run")
    dry_plan = aws.plan()
    code, out, _ = run(capsys, "keys", "sync")
    # Then the dry run changed nothing, and the sync put the key in the plan
    assert dry.split() == ["would", "add", issued.record.key_id] and dry_plan == set()
    assert code == 0 and out.split() == ["added", issued.record.key_id]
    assert aws.plan() == {usage_identifier(issued.key)}
