"""The REQUEST authorizer: a valid key → an Allow policy for the stage and the tenant in context."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from functions.authorizer.handler import UNAUTHORIZED, lambda_handler
from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore
from memory_engine.composition import wiring
from memory_engine.edge.auth import key_id_of, usage_key_value
from memory_engine.ports.clock import SystemClock
from memory_engine.settings import reset_settings
from memory_engine.usecases import keys
from memory_engine_app.server.apigw import LocalContext
from tests.contract.moto_keys import REGION, mocked_key_table
from tests.handlers.conftest import load_event


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The authorizer configured for the AWS backend, and a key of tenant acme in its table."""
    with mocked_key_table() as (table, client):
        monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "aws")
        monkeypatch.setenv("MEMORY_ENGINE_TABLE_NAME", table)
        monkeypatch.setenv("MEMORY_ENGINE_QUEUE_URL", "https://sqs.us-east-1.amazonaws.com/1/q.fifo")
        monkeypatch.setenv("AWS_REGION", REGION)
        reset_settings()
        wiring.reset()
        issued = keys.create(DynamoDbKeyStore(table, REGION, dynamodb=client), SystemClock().now(), "acme")
        yield issued.key
    reset_settings()
    wiring.reset()


def event_with(authorization: str | None) -> dict[str, Any]:
    event = copy.deepcopy(load_event("authorizer"))
    event["headers"].pop("Authorization")
    if authorization is not None:
        event["headers"]["authorization"] = authorization  # any case, as HTTP allows
    return event


def test_a_bearer_key_gets_an_allow_policy_with_its_tenant(key: str) -> None:
    # Given a valid key / When the authorizer runs
    answer = lambda_handler(event_with(f"Bearer {key}"), LocalContext())
    # Then the tenant is the principal and in the context the handlers read
    assert answer["principalId"] == "acme"
    assert answer["context"]["tenant"] == "acme"
    (statement,) = answer["policyDocument"]["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == "execute-api:Invoke"


def test_the_allow_policy_covers_every_route_of_the_stage_so_caching_is_safe(key: str) -> None:
    answer = lambda_handler(event_with(f"Token {key}"), LocalContext())
    (statement,) = answer["policyDocument"]["Statement"]
    assert statement["Resource"] == ["arn:aws:execute-api:us-east-1:123456789012:abc123/dev/*/*"]


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Basic dXNlcjpwYXNz", "Bearer me_ffffffffffffffff_unknown", "Bearer garbage"],
)
def test_a_missing_malformed_or_unknown_key_is_refused_with_401(key: str, authorization: str | None) -> None:
    # API Gateway turns exactly this error message into a 401.
    with pytest.raises(Exception, match=f"^{UNAUTHORIZED}$"):
        lambda_handler(event_with(authorization), LocalContext())


def test_a_forged_secret_for_a_real_key_id_is_refused(key: str) -> None:
    forged = key.rsplit("_", 1)[0] + "_forged"
    with pytest.raises(Exception, match=f"^{UNAUTHORIZED}$"):
        lambda_handler(event_with(f"Bearer {forged}"), LocalContext())


def test_a_valid_key_names_its_usage_plan_key_as_the_usage_identifier(key: str) -> None:
    # Given a valid key / When the authorizer runs
    answer = lambda_handler(event_with(f"Bearer {key}"), LocalContext())
    # Then API Gateway is told which usage-plan key to throttle: the one derived from the key id
    assert answer["usageIdentifierKey"] == usage_key_value(str(key_id_of(key)))


def test_the_authorizer_runs_on_the_environment_the_stack_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given only what infra/stack.py sets for the authorizer, inside Lambda: no queue, no index
    with mocked_key_table() as (table, client):
        for name, value in {
            "MEMORY_ENGINE_BACKEND": "aws",
            "MEMORY_ENGINE_TABLE_NAME": table,
            "AWS_LAMBDA_FUNCTION_NAME": "authorizer",
            "AWS_REGION": REGION,
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("MEMORY_ENGINE_QUEUE_URL", raising=False)
        monkeypatch.delenv("MEMORY_ENGINE_OPENSEARCH_URL", raising=False)
        reset_settings()
        wiring.reset()
        issued = keys.create(DynamoDbKeyStore(table, REGION, dynamodb=client), SystemClock().now(), "acme")
        # When a request with the key arrives / Then it is allowed
        try:
            answer = lambda_handler(event_with(f"Bearer {issued.key}"), LocalContext())
        finally:
            reset_settings()
            wiring.reset()
    assert answer["principalId"] == "acme"


def test_a_bare_key_gets_an_allow_policy_with_its_tenant(key: str) -> None:
    # Given a valid key sent with no scheme (the game dialect's form) / When the authorizer runs
    answer = lambda_handler(event_with(key), LocalContext())
    # Then it is that key's tenant, as with Bearer
    assert answer["principalId"] == "acme"
    assert answer["context"]["tenant"] == "acme"
    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Allow"
