"""The API Gateway usage-plan adapter on moto: one API key per key id, with the derived value, in the
plan; nothing left behind when a step fails."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from memory_engine.adapters.aws.apigateway_usage_plan import ApiGatewayUsagePlanKeys
from memory_engine.edge.auth import usage_key_value
from memory_engine.errors import Conflict, Unavailable
from tests.contract.moto_keys import (
    REGION,
    api_key_values,
    mocked_key_table,
    mocked_usage_plan,
    usage_plan_values,
)

KEY_ID = "0123456789ab"


@pytest.fixture
def plan() -> Iterator[tuple[ApiGatewayUsagePlanKeys, Any, str]]:
    """(adapter, API Gateway client, usage plan id) on a fresh moto account."""
    with mocked_key_table():
        plan_id, apigateway = mocked_usage_plan()
        yield ApiGatewayUsagePlanKeys(plan_id, REGION, apigateway=apigateway), apigateway, plan_id


def test_adding_a_key_id_puts_its_derived_api_key_in_the_plan(
    plan: tuple[ApiGatewayUsagePlanKeys, Any, str],
) -> None:
    adapter, apigateway, plan_id = plan
    # When a key id is added
    adapter.add(KEY_ID)
    # Then the plan holds one API key, whose value is the one the authorizer will name
    assert usage_plan_values(apigateway, plan_id) == {usage_key_value(KEY_ID)}
    assert adapter.key_ids() == {KEY_ID}


def test_adding_a_key_id_twice_is_a_conflict_that_changes_nothing(
    plan: tuple[ApiGatewayUsagePlanKeys, Any, str],
) -> None:
    adapter, apigateway, plan_id = plan
    adapter.add(KEY_ID)

    with pytest.raises(Conflict):
        adapter.add(KEY_ID)

    assert usage_plan_values(apigateway, plan_id) == {usage_key_value(KEY_ID)}
    assert api_key_values(apigateway) == {usage_key_value(KEY_ID)}


def test_removing_a_key_id_deletes_its_api_key(plan: tuple[ApiGatewayUsagePlanKeys, Any, str]) -> None:
    adapter, apigateway, _ = plan
    adapter.add(KEY_ID)
    adapter.add("ba9876543210")

    removed = adapter.remove(KEY_ID)

    assert removed is True
    assert adapter.key_ids() == {"ba9876543210"}
    assert api_key_values(apigateway) == {usage_key_value("ba9876543210")}


def test_removing_a_key_id_without_a_usage_key_is_not_an_error(
    plan: tuple[ApiGatewayUsagePlanKeys, Any, str],
) -> None:
    adapter, _, _ = plan

    assert adapter.remove(KEY_ID) is False


def test_an_api_key_outside_the_plan_is_removed_too(plan: tuple[ApiGatewayUsagePlanKeys, Any, str]) -> None:
    # Given the key id's API key, made but never put in the plan
    adapter, apigateway, _ = plan
    apigateway.create_api_key(name=f"memory-engine-{KEY_ID}", value=usage_key_value(KEY_ID), enabled=True)
    # When the key id is removed / Then its API key is gone
    assert adapter.remove(KEY_ID) is True
    assert api_key_values(apigateway) == set()


def test_keys_memory_engine_did_not_make_are_not_its_key_ids(
    plan: tuple[ApiGatewayUsagePlanKeys, Any, str],
) -> None:
    # Given a hand-made API key in the plan
    adapter, apigateway, plan_id = plan
    other = apigateway.create_api_key(name="partner", value="partner-key-made-by-hand-0001", enabled=True)
    apigateway.create_usage_plan_key(usagePlanId=plan_id, keyId=other["id"], keyType="API_KEY")
    # When memory-engine lists its key ids / Then the hand-made key is not one of them
    assert adapter.key_ids() == set()


def test_an_unknown_usage_plan_leaves_no_api_key_behind_and_names_the_setting(
    plan: tuple[ApiGatewayUsagePlanKeys, Any, str],
) -> None:
    # Given a plan that API Gateway does not know (moto does not check plan ids: answer as AWS does)
    _, apigateway, _ = plan
    apigateway.meta.events.register("before-call.apigateway.CreateUsagePlanKey", no_such_plan)
    adapter = ApiGatewayUsagePlanKeys("nosuchplan", REGION, apigateway=apigateway)
    # When a key id is added / Then the error names the setting to fix
    with pytest.raises(Unavailable, match="MEMORY_ENGINE_USAGE_PLAN_ID"):
        adapter.add(KEY_ID)
    # and the API key made on the way was taken back
    assert api_key_values(apigateway) == set()


def no_such_plan(**_: Any) -> None:
    error = {"Error": {"Code": "NotFoundException", "Message": "Invalid Usage Plan ID specified"}}
    raise ClientError(error, "CreateUsagePlanKey")
