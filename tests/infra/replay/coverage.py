"""Which synthesized variants the IAM replay plays, and the proof that it need not play the others.

The replay of a variant depends on: each function's role statements (the actions a replayed call
is checked against; OpenSearch's, the logs' and X-Ray's are not code calls the replay makes), the
resource policies it evaluates beside them (queues, topic, keys), and each function's
environment (what the functions' code does: which embedder, extractor, secret). Two variants
equal in all three replay the same calls with the same answers, so one is replayed for both.
What is left out of that comparison is named here, each with why it cannot change a replayed
call's authorization.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from functions.routes import functions
from infra.access import OTHER_FUNCTION_NEEDS
from tests.infra import cfn
from tests.infra.variants import DEV, DEV_LLM, KEPT_TABLE, MORE_ROUTES, PROD, PROD_AGAIN, VARIANTS, Variant

# Replayed: the default deployment, every alternative at once, and the two embedder/extractor
# pairs between them (the table, queues and their policies are the same in all four).
DEV_SAGEMAKER = Variant("dev", "aoss", "sagemaker", "builtin").name
REPLAYED = (DEV, DEV_LLM, DEV_SAGEMAKER, PROD)

# Granted for what runs outside the function's code, so no replayed call asks for them: the
# Lambda service writes the function's logs and its X-Ray segments; OpenSearch's requests are
# replayed on their own, against each grant, on both search kinds (test_opensearch_grants.py).
NOT_CODE_CALLS = ("logs:", "xray:", "aoss:", "es:")

# Environment the replay does not read, by variable, with why.
NOT_REPLAYED_ENVIRONMENT: Mapping[str, str] = {
    "MEMORY_ENGINE_OPENSEARCH_URL": "the replay stands a local index in for OpenSearch (whose "
    "requests and grants test_opensearch_grants.py checks per search kind)",
    "MEMORY_ENGINE_OPENSEARCH_SERVICE": "as MEMORY_ENGINE_OPENSEARCH_URL",
    "MEMORY_ENGINE_CHAT_MODEL": "the model a chat request names to the LLM endpoint (not AWS): "
    "no AWS call reads it",
}


def replayed_inputs(template: Mapping[str, Any], table: str | None = None) -> dict[str, Any]:
    """What a replay of the template plays against: per function its statements (code calls
    only) and environment (but NOT_REPLAYED_ENVIRONMENT), and the resource policies. `table`, a
    kept table's name the template names literally, is read as the table the stack creates."""
    template = dict(template)
    found: dict[str, Any] = {}
    for folder, function_id in sorted(cfn.functions_by_folder(template).items()):
        statements = []
        for statement in cfn.statements(template, cfn.role_of(template, function_id)):
            kept = sorted(a for a in cfn.listed(statement["Action"]) if not str(a).startswith(NOT_CODE_CALLS))
            if kept:
                statements.append(_text({**statement, "Action": kept}, table))
        environment = {
            name: value
            for name, value in cfn.render(cfn.environment(template, function_id)).items()
            if name not in NOT_REPLAYED_ENVIRONMENT
        }
        found[folder] = {"statements": sorted(statements), "environment": _text(environment, table)}
    found["resource policies"] = sorted(_text(policy, table) for policy in _resource_policies(template))
    return found


def _resource_policies(template: dict[str, Any]) -> list[Any]:
    policies: list[Any] = []
    for kind, path in (
        ("AWS::SQS::QueuePolicy", ("PolicyDocument",)),
        ("AWS::SNS::TopicPolicy", ("PolicyDocument",)),
        ("AWS::KMS::Key", ("KeyPolicy",)),
    ):
        for body in cfn.resources(template, kind).values():
            policies.append(cfn.render(body["Properties"][path[0]]))
    return policies


def _text(value: Any, table: str | None) -> str:
    """The value as sorted JSON, the created table named one way whatever its logical id; `table`,
    a kept table the template names literally (by ARN or name), read as that created table."""
    text = json.dumps(value, sort_keys=True)
    if table is not None:
        arn = f"arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/{table}"
        text = text.replace(arn, "<DataTable.Arn>").replace(f'"{table}"', '"<DataTable>"')
    return re.sub(r"<DataTable[0-9A-F]{8}(\.Arn)?>", lambda m: f"<DataTable{m.group(1) or ''}>", text)


def handled(inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs of the functions that have code (MORE_ROUTES adds two routes routes.py does
    not have: there is no handler of theirs to replay)."""
    code = {*functions(), *OTHER_FUNCTION_NEEDS, "resource policies"}
    return {name: value for name, value in inputs.items() if name in code}


# Every variant the app synthesizes, and how its inputs are read for the comparison.
SYNTHESIZED: dict[str, str | None] = {
    **{variant.name: None for variant in VARIANTS},
    MORE_ROUTES: None,
    PROD_AGAIN: KEPT_TABLE,
}
