"""Least privilege: each function's role names its resources and holds only what it uses."""

from __future__ import annotations

from typing import Any

import pytest

from functions.routes import Need
from infra.access import FUNCTION_NEEDS
from infra.data import READ_ACTIONS, WRITE_ACTIONS
from memory_engine.adapters.aws.dynamodb_keys import create_table_request
from tests.infra import cfn
from tests.infra.variants import LLM_SECRET

XRAY = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
LOGS = {"logs:CreateLogStream", "logs:PutLogEvents"}

TABLE_INDEXES = [
    index["IndexName"]
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
    for index in create_table_request("any").get(kind, [])
]


def actions_of(template: dict[str, Any], folder: str) -> set[str]:
    return cfn.allowed_actions(template, cfn.functions_by_folder(template)[folder])


@pytest.mark.parametrize("stack", ["dev", "prod", "dev_domain"])
def test_no_statement_of_any_role_allows_every_resource_except_xray(
    stack: str, request: pytest.FixtureRequest
) -> None:
    template = request.getfixturevalue(stack)
    for name, body in cfn.resources(template, "AWS::IAM::Policy").items():
        for statement in cfn.render(body["Properties"]["PolicyDocument"]["Statement"]):
            if "*" in cfn.listed(statement["Resource"]):
                assert set(cfn.actions(statement)) <= XRAY | {
                    "logs:PutResourcePolicy",
                    "logs:DeleteResourcePolicy",
                }, name


def test_health_may_only_write_its_logs_and_traces(dev: dict[str, Any]) -> None:
    assert actions_of(dev, "health") == LOGS | XRAY


def test_retrieve_reads_the_table_and_cannot_write_it_or_queue_jobs(dev: dict[str, Any]) -> None:
    allowed = actions_of(dev, "retrieve")
    assert set(READ_ACTIONS) <= allowed
    assert not allowed & set(WRITE_ACTIONS)
    assert not any(action.startswith("sqs:") for action in allowed)


def test_consolidate_appends_to_the_table_and_queues_but_never_deletes_or_touches_the_index(
    dev: dict[str, Any],
) -> None:
    allowed = actions_of(dev, "consolidate")
    assert {"dynamodb:PutItem", "dynamodb:UpdateItem", "sqs:SendMessage"} <= allowed
    assert not allowed & {"dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    assert not any(action.startswith(("aoss:", "es:", "lambda:")) for action in allowed)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_no_role_holds_a_table_or_queue_action_the_code_never_sends(
    stack: str, request: pytest.FixtureRequest
) -> None:
    # The store sends no ConditionCheck; queues are sent to by the URL the function is told, so
    # none looks one up (the worker's role reads its queue's attributes for Lambda's poller only)
    template = request.getfixturevalue(stack)
    for folder in cfn.functions_by_folder(template):
        allowed = actions_of(template, folder)
        assert not allowed & {"dynamodb:ConditionCheckItem", "sqs:GetQueueUrl"}, folder
        if folder != "extraction_worker":
            assert "sqs:GetQueueAttributes" not in allowed, folder


def test_only_the_fork_may_batch_write(dev: dict[str, Any]) -> None:
    writers = {f for f in cfn.functions_by_folder(dev) if "dynamodb:BatchWriteItem" in actions_of(dev, f)}
    assert writers == {"fork"}


def test_embed_only_invokes_the_embedder(dev: dict[str, Any]) -> None:
    assert actions_of(dev, "embed") - LOGS - XRAY == {"lambda:InvokeFunction"}


def test_the_authorizer_may_read_api_key_items_and_nothing_else(dev: dict[str, Any]) -> None:
    role = cfn.role_of(dev, cfn.functions_by_folder(dev)["authorizer"])
    (lookup,) = [
        s for s in cfn.statements(dev, role) if any(a.startswith("dynamodb:") for a in cfn.actions(s))
    ]
    assert cfn.actions(lookup) == ["dynamodb:GetItem"]
    assert lookup["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["KEY#*"]}}


def test_table_statements_name_the_table_and_its_indexes_never_a_wildcard(dev: dict[str, Any]) -> None:
    (table_id,) = cfn.resources(dev, "AWS::DynamoDB::Table")
    for body in cfn.resources(dev, "AWS::IAM::Policy").values():
        for statement in cfn.render(body["Properties"]["PolicyDocument"]["Statement"]):
            if any(action.startswith("dynamodb:") for action in cfn.actions(statement)):
                assert set(cfn.listed(statement["Resource"])) <= {
                    f"<{table_id}.Arn>",
                    *(f"<{table_id}.Arn>/index/{name}" for name in TABLE_INDEXES),
                }


def test_every_function_has_its_own_role(dev: dict[str, Any]) -> None:
    functions = cfn.resources(dev, "AWS::Lambda::Function")
    roles = [cfn.role_of(dev, name) for name in functions]
    assert len(roles) == len(set(roles))
    managed = [
        body["Properties"].get("ManagedPolicyArns") for body in cfn.resources(dev, "AWS::IAM::Role").values()
    ]
    assert sum(1 for arns in managed if arns) == 1  # API Gateway's account logging role only


def test_functions_that_call_the_llm_may_read_its_keys_secret_and_no_other(
    templates: dict[str, dict[str, Any]],
) -> None:
    for name, template in templates.items():
        for folder, function in cfn.functions_by_folder(template).items():
            found = [
                statement
                for statement in cfn.statements(template, cfn.role_of(template, function))
                if any(action.startswith("secretsmanager:") for action in cfn.actions(statement))
            ]
            llm = name.endswith("-llm") and Need.EXTRACT in FUNCTION_NEEDS.get(folder, frozenset())
            if not llm:
                assert found == [], (name, folder)
                continue
            (statement,) = found
            assert cfn.actions(statement) == ["secretsmanager:GetSecretValue"]
            # the secret's ARN: its name and the six characters Secrets Manager appends
            assert cfn.render(statement["Resource"]).endswith(f":secret:{LLM_SECRET}-??????"), (name, folder)


def test_the_llm_key_is_read_by_the_worker_chat_and_fact_generation(dev_llm: dict[str, Any]) -> None:
    readers = {
        folder
        for folder, function in cfn.functions_by_folder(dev_llm).items()
        if "secretsmanager:GetSecretValue" in cfn.allowed_actions(dev_llm, function)
    }
    assert readers == {"extraction_worker", "chat_completions", "bank_generate"}
