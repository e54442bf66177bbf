"""The replay's IAM evaluation and request expansion (tests/infra/replay/), on their own: what
they allow must be what AWS allows, or the replay proves nothing."""

from __future__ import annotations

import json

import pytest

from tests.infra.replay.policy import Authorization, Principal, allowed, evaluate
from tests.infra.replay.requests import LEADING_KEYS, Where, authorizations

TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/t"
WHERE = Where(
    "123456789012",
    "us-east-1",
    lambda name: f"arn:aws:secretsmanager:us-east-1:123456789012:secret:{name}-AbCdEf",
)


def allow(actions: list[str], resources: list[str], **condition: dict[str, dict[str, list[str]]]) -> dict:
    statement = {"Effect": "Allow", "Action": actions, "Resource": resources}
    return statement | ({"Condition": condition["condition"]} if condition else {})


def test_an_action_on_a_resource_the_statement_names_is_allowed_and_no_other() -> None:
    statements = [allow(["dynamodb:Query"], [TABLE, f"{TABLE}/index/gsi4"])]
    assert allowed(statements, Authorization("dynamodb:Query", f"{TABLE}/index/gsi4"))
    assert not allowed(statements, Authorization("dynamodb:Query", f"{TABLE}/index/gsi1"))
    assert not allowed(statements, Authorization("dynamodb:Scan", TABLE))


def test_question_marks_match_one_character_each() -> None:
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:memory-engine/openai-??????"
    statements = [allow(["secretsmanager:GetSecretValue"], [secret])]
    assert allowed(
        statements, Authorization("secretsmanager:GetSecretValue", secret.replace("??????", "AbCdEf"))
    )
    assert not allowed(
        statements, Authorization("secretsmanager:GetSecretValue", secret.replace("??????", "AbC"))
    )


def test_an_explicit_deny_wins_over_an_allow() -> None:
    statements = [
        allow(["dynamodb:*"], [TABLE]),
        {"Effect": "Deny", "Action": "dynamodb:Scan", "Resource": "*"},
    ]
    assert allowed(statements, Authorization("dynamodb:GetItem", TABLE))
    assert not allowed(statements, Authorization("dynamodb:Scan", TABLE))


def test_leading_keys_limit_the_items_a_role_may_read() -> None:
    keys_only = {"ForAllValues:StringLike": {LEADING_KEYS: ["KEY#*"]}}
    statements = [allow(["dynamodb:GetItem"], [TABLE], condition=keys_only)]
    assert allowed(statements, Authorization("dynamodb:GetItem", TABLE, {LEADING_KEYS: ["KEY#abc"]}))
    assert not allowed(statements, Authorization("dynamodb:GetItem", TABLE, {LEADING_KEYS: ["T#acme#S#s1"]}))


def test_a_condition_operator_it_does_not_know_fails_loudly() -> None:
    statements = [
        allow(["dynamodb:GetItem"], [TABLE], condition={"DateGreaterThan": {"aws:CurrentTime": ["x"]}})
    ]
    with pytest.raises(NotImplementedError, match="DateGreaterThan"):
        allowed(statements, Authorization("dynamodb:GetItem", TABLE))


def test_a_transaction_is_authorized_as_its_items_own_actions() -> None:
    body = {
        "TransactItems": [
            {"Put": {"TableName": "t", "Item": {"pk": {"S": "T#a#S#s"}}}},
            {"Update": {"TableName": "t", "Key": {"pk": {"S": "T#a#S#s"}, "sk": {"S": "SESSION"}}}},
            {"ConditionCheck": {"TableName": "t", "Key": {"pk": {"S": "T#a#S#s"}}}},
        ]
    }
    found = authorizations("dynamodb:TransactWriteItems", json.dumps(body).encode(), "/", WHERE)
    assert [(a.action, a.resource) for a in found] == [
        ("dynamodb:PutItem", TABLE),
        ("dynamodb:UpdateItem", TABLE),
        ("dynamodb:ConditionCheckItem", TABLE),
    ]


def test_a_query_of_an_index_is_authorized_on_the_index_with_its_partition_key() -> None:
    body = {
        "TableName": "t",
        "IndexName": "gsi4",
        "KeyConditionExpression": "gsi4pk = :tenant",
        "ExpressionAttributeValues": {":tenant": {"S": "T#a#SESSIONS"}},
    }
    (found,) = authorizations("dynamodb:Query", json.dumps(body).encode(), "/", WHERE)
    assert (found.resource, found.context[LEADING_KEYS]) == (f"{TABLE}/index/gsi4", ["T#a#SESSIONS"])


def test_an_invocation_is_authorized_as_invoke_function_on_the_function() -> None:
    (found,) = authorizations("lambda:Invoke", b"{}", "/2015-03-31/functions/embedder/invocations", WHERE)
    assert (found.action, found.resource) == (
        "lambda:InvokeFunction",
        "arn:aws:lambda:us-east-1:123456789012:function:embedder",
    )


ROLE = Principal("AWS", "arn:aws:iam::123456789012:role/worker", "123456789012")
QUEUE = "arn:aws:sqs:us-east-1:123456789012:q.fifo"
TLS_ONLY = {
    "Effect": "Deny",
    "Principal": {"AWS": "*"},
    "Action": "sqs:*",
    "Resource": QUEUE,
    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
}


def send(transport: str) -> Authorization:
    return Authorization("sqs:SendMessage", QUEUE, {"aws:SecureTransport": [transport]})


def test_a_resource_policys_deny_wins_over_the_roles_allow() -> None:
    granted = [allow(["sqs:SendMessage"], [QUEUE])]
    assert evaluate(granted, [TLS_ONLY], ROLE, send("true"))
    assert not evaluate(granted, [TLS_ONLY], ROLE, send("false"))


def test_a_resource_policy_naming_the_account_allows_no_role_by_itself() -> None:
    root = {
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
        "Action": "sqs:*",
        "Resource": QUEUE,
    }
    assert not evaluate([], [root], ROLE, send("true"))


def test_a_key_is_used_only_as_its_key_policy_allows() -> None:
    key = "arn:aws:kms:us-east-1:123456789012:key/k"
    granted = [allow(["kms:Decrypt"], [key])]
    decrypt = Authorization("kms:Decrypt", key)
    delegating = {
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
        "Action": "kms:*",
        "Resource": "*",
    }
    # Given a role allowed to decrypt: the key's policy must let IAM decide
    assert evaluate(granted, [delegating], ROLE, decrypt)
    assert not evaluate(granted, [], ROLE, decrypt)
    # A service is allowed by the key policy alone
    service = {
        "Effect": "Allow",
        "Principal": {"Service": "cloudwatch.amazonaws.com"},
        "Action": "kms:Decrypt",
        "Resource": "*",
    }
    cloudwatch = Principal("Service", "cloudwatch.amazonaws.com", "123456789012")
    assert evaluate([], [service], cloudwatch, decrypt)
    assert not evaluate([], [delegating], cloudwatch, decrypt)
