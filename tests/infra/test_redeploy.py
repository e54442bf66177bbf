"""Destroy and deploy again: `cdk destroy` of a stage keeps only what holds data (the table, the
queues, the logs, the alarm topic's key) and nothing under a fixed name, so the next deploy creates nothing
that is still there; the prod stage deployed again with the kept table's name (`existingTableName`)
uses that table, with its data, and creates none. The search index is derived data: it goes with
the stack and is rebuilt from the table (`memory-engine reindex`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra import cfn
from tests.infra.variants import KEPT_TABLE, PROD_AGAIN, PROD_SERVERLESS, VARIANTS

# What `cdk destroy` may leave behind: data (the table; the queues' jobs not yet run and dead
# letters), records (logs), the alarm topic's key, and API Gateway's account-wide logging role
# (one per account and region, which other APIs may use).
KEPT_KINDS = {
    "AWS::DynamoDB::Table",
    "AWS::SQS::Queue",
    "AWS::Logs::LogGroup",
    "AWS::KMS::Key",
    "AWS::IAM::Role",
    "AWS::ApiGateway::Account",
}
# The properties that give a resource a fixed physical name (a second create of it would fail).
NAME_PROPERTIES = ("TableName", "LogGroupName", "DomainName", "Name", "AliasName", "QueueName", "TopicName")
SERVERLESS_KINDS = (
    "AWS::OpenSearchServerless::Collection",
    "AWS::OpenSearchServerless::SecurityPolicy",
    "AWS::OpenSearchServerless::AccessPolicy",
)
PROD_VARIANTS = [variant.name for variant in VARIANTS if variant.stage == "prod"]


def kept(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The resources `cdk destroy` leaves in the account."""
    return {
        name: body for name, body in template["Resources"].items() if body.get("DeletionPolicy") == "Retain"
    }


@pytest.mark.parametrize("stack", PROD_VARIANTS)
def test_a_destroyed_prod_stage_keeps_its_data_and_nothing_under_a_fixed_name(
    templates: dict[str, dict[str, Any]], stack: str
) -> None:
    left = kept(templates[stack])

    assert "AWS::DynamoDB::Table" in {body["Type"] for body in left.values()}
    assert {body["Type"] for body in left.values()} <= KEPT_KINDS
    named = {name: body.get("Properties", {}).keys() & set(NAME_PROPERTIES) for name, body in left.items()}
    assert {name: names for name, names in named.items() if names} == {}


def test_the_search_index_goes_with_the_stack_and_comes_back_under_the_same_names(
    templates: dict[str, dict[str, Any]],
) -> None:
    # Given the default prod stage, and the same stage deployed again after a destroy
    first, again = templates[PROD_SERVERLESS.name], templates[PROD_AGAIN]

    def names(template: dict[str, Any]) -> list[tuple[str, str]]:
        return sorted(
            (kind, body["Properties"]["Name"])
            for kind in SERVERLESS_KINDS
            for body in cfn.resources(template, kind).values()
        )

    # Then the collection and its three policies are deleted with the stack (no Retain) ...
    for kind in SERVERLESS_KINDS:
        for body in cfn.resources(first, kind).values():
            assert body.get("DeletionPolicy", "Delete") == "Delete"
    # ... and made again under the same names: nothing of them is left to collide with
    assert names(first) == names(again)
    assert ("AWS::OpenSearchServerless::Collection", "memory-engine-prod") in names(again)


def test_the_managed_domain_goes_with_the_stack_too(templates: dict[str, dict[str, Any]]) -> None:
    for stack in PROD_VARIANTS:
        for body in cfn.resources(templates[stack], "AWS::OpenSearchService::Domain").values():
            assert body.get("DeletionPolicy", "Delete") == "Delete"


def test_deploying_again_with_the_kept_table_uses_it_and_creates_none(
    templates: dict[str, dict[str, Any]],
) -> None:
    again = templates[PROD_AGAIN]

    assert cfn.resources(again, "AWS::DynamoDB::Table") == {}
    assert cfn.outputs(again)["TableName"] == KEPT_TABLE
    functions = cfn.functions_by_folder(again)
    for function in functions.values():
        env = cfn.environment(again, function)
        if "MEMORY_ENGINE_TABLE_NAME" in env:
            assert env["MEMORY_ENGINE_TABLE_NAME"] == KEPT_TABLE
    # The grants name the kept table and its indexes, one by one
    worker = cfn.role_of(again, functions["extraction_worker"])
    resources = [
        str(resource)
        for statement in cfn.statements(again, worker)
        if any(str(action).startswith("dynamodb:") for action in _list(statement["Action"]))
        for resource in _list(statement["Resource"])
    ]
    assert any(resource.endswith(f":table/{KEPT_TABLE}") for resource in resources), resources
    assert any(f":table/{KEPT_TABLE}/index/gsi3" in resource for resource in resources), resources
    assert not any("*" in resource for resource in resources)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
