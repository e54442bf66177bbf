"""OpenSearch request paths against the grants the CDK app synthesizes, for both search variants.

Each function that reaches the index is played through its handler over a stub transport
(tests/infra/opensearch_replay.py), and every HTTP method + path it sent is checked against what
its role may do in the template: on a managed domain (`search=es`) IAM authorises by path, so the
role's `es:ESHttp<Method>` statements must name a resource matching `<domain arn><path>`; on
Serverless (`search=aoss`) the collection's data-access policy must give the role the permission
AWS lists for that operation on the index. The operators' commands are checked against what
`searchAdminPrincipals` is granted. A request outside its grants is a 403 on AWS and a failure here.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest

from infra.access import FUNCTION_NEEDS, Need
from tests.fakes.opensearch import Request
from tests.infra import cfn
from tests.infra.opensearch_replay import OPERATOR as OPERATOR_ACTOR
from tests.infra.opensearch_replay import Played, play
from tests.infra.variants import DEV, DEV_DOMAIN, MORE_ROUTES, OPERATOR, PROD, Synthesized

INDEX = "memories"

# What the Serverless data-access policy must allow for each operation the adapter sends, from
# AWS's table "Supported OpenSearch API operations and permissions" (OpenSearch Serverless
# developer guide, serverless-genref). An operation missing here is one Serverless does not list.
AOSS_PERMISSIONS: list[tuple[str, str, str]] = [
    ("PUT", "/{index}", "aoss:CreateIndex"),
    ("HEAD", "/{index}", "aoss:DescribeIndex"),
    ("GET", "/{index}", "aoss:DescribeIndex"),
    ("GET", "/{index}/_mapping", "aoss:DescribeIndex"),
    ("PUT", "/{index}/_mapping", "aoss:UpdateIndex"),
    ("DELETE", "/{index}", "aoss:DeleteIndex"),
    ("POST", "/{index}/_bulk", "aoss:WriteDocument"),
    ("POST", "/_bulk", "aoss:WriteDocument"),
    ("GET", "/{index}/_search", "aoss:ReadDocument"),
    ("POST", "/{index}/_search", "aoss:ReadDocument"),
    ("GET", "/{index}/_msearch", "aoss:ReadDocument"),
    ("POST", "/{index}/_msearch", "aoss:ReadDocument"),
    ("POST", "/_msearch", "aoss:ReadDocument"),
]


@cache
def _played(service: str) -> Played:
    monkeypatch = pytest.MonkeyPatch()
    try:
        return play(service, monkeypatch)
    finally:
        monkeypatch.undo()


@pytest.fixture(scope="module")
def serverless_requests() -> Played:
    return _played("aoss")


@pytest.fixture(scope="module")
def domain_requests() -> Played:
    return _played("es")


def iam_matches(pattern: str, value: str) -> bool:
    """IAM's wildcard match: `*` any run of characters (slashes too), `?` one character."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value) is not None


def aoss_permission(request: Request) -> str | None:
    for method, template, permission in AOSS_PERMISSIONS:
        if method == request.method and request.path == template.replace("{index}", INDEX):
            return permission
    return None


def domain_arn(template: dict[str, Any]) -> str:
    (domain_id,) = cfn.resources(template, "AWS::OpenSearchService::Domain")
    return f"<{domain_id}.Arn>"


def role_statements(template: dict[str, Any], folder: str) -> list[dict[str, Any]]:
    return cfn.statements(template, cfn.role_of(template, cfn.functions_by_folder(template)[folder]))


def domain_policy_statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    """The statements of the domain's access policy, which CDK installs with a custom resource."""
    found: list[dict[str, Any]] = []
    for body in cfn.resources(template, "Custom::OpenSearchAccessPolicy").values():
        call = json.loads(cfn.render(body["Properties"]["Create"]))
        found += json.loads(call["parameters"]["AccessPolicies"])["Statement"]
    return found


def denied_on_domain(requests: list[Request], statements: list[dict[str, Any]], arn: str) -> list[str]:
    """The requests no Allow statement covers: `es:ESHttp<Method>` on `<domain arn><path>`."""
    denied = []
    for request in requests:
        action, resource = f"es:ESHttp{request.method.capitalize()}", f"{arn}{request.path}"
        allowed = any(
            statement["Effect"] == "Allow"
            and any(iam_matches(a, action) for a in cfn.actions(statement))
            and any(iam_matches(r, resource) for r in cfn.listed(statement["Resource"]))
            for statement in statements
        )
        if not allowed:
            denied.append(f"{action} {resource}")
    return sorted(set(denied))


def data_rules(template: dict[str, Any]) -> list[dict[str, Any]]:
    (body,) = cfn.resources(template, "AWS::OpenSearchServerless::AccessPolicy").values()
    return list(json.loads(cfn.render(body["Properties"]["Policy"])))


def denied_on_serverless(requests: list[Request], template: dict[str, Any], principal: str) -> list[str]:
    """The requests the data-access policy does not allow the principal on the index."""
    (collection,) = cfn.resources(template, "AWS::OpenSearchServerless::Collection").values()
    index = f"index/{collection['Properties']['Name']}/{INDEX}"
    granted = {
        permission
        for rule in data_rules(template)
        if principal in rule["Principal"]
        for item in rule["Rules"]
        if item["ResourceType"] == "index" and any(iam_matches(r, index) for r in item["Resource"])
        for permission in item["Permission"]
    }
    denied = []
    for request in requests:
        permission = aoss_permission(request)
        if permission is None or permission not in granted:
            denied.append(f"{request.method} {request.path} ({permission or 'not a Serverless operation'})")
    return sorted(set(denied))


def index_users(played: Played) -> list[str]:
    return sorted(actor for actor, requests in played.items() if requests and actor != OPERATOR_ACTOR)


def test_every_function_that_needs_the_index_is_replayed_and_only_those_send_requests(
    serverless_requests: Played, domain_requests: Played
) -> None:
    # Given the functions whose needs name the index
    index_needs = {Need.INDEX_READ, Need.INDEX_WRITE, Need.INDEX_ADMIN}
    needing = sorted(folder for folder, needs in FUNCTION_NEEDS.items() if needs & index_needs)
    # When the replay has run / Then each of them sent requests, and nobody else did
    assert index_users(serverless_requests) == needing
    assert index_users(domain_requests) == needing


@pytest.mark.parametrize("stack", [DEV_DOMAIN, PROD])
def test_every_request_of_a_function_is_within_its_roles_domain_grants(
    synthesized: Synthesized, domain_requests: Played, stack: str
) -> None:
    # Given a managed-domain stack and each function's requests
    template = synthesized.templates[stack]
    arn = domain_arn(template)
    # When each request is matched with the function's role statements
    denied = {
        folder: denied_on_domain(requests, role_statements(template, folder), arn)
        for folder, requests in domain_requests.items()
        if folder != OPERATOR_ACTOR
    }
    # Then IAM allows every one of them
    assert {folder: paths for folder, paths in denied.items() if paths} == {}


def test_every_request_of_a_function_is_within_its_roles_serverless_permissions(
    synthesized: Synthesized, serverless_requests: Played
) -> None:
    # Given the Serverless stack and each function's requests
    template = synthesized.templates[DEV]
    functions = cfn.functions_by_folder(template)
    # When each request's permission is looked up in the data-access policy for the role
    denied = {
        folder: denied_on_serverless(requests, template, f"<{cfn.role_of(template, functions[folder])}.Arn>")
        for folder, requests in serverless_requests.items()
        if folder != OPERATOR_ACTOR
    }
    # Then the policy allows every one of them
    assert {folder: paths for folder, paths in denied.items() if paths} == {}


def test_every_role_that_reaches_the_collection_may_call_its_api(
    synthesized: Synthesized, serverless_requests: Played
) -> None:
    # Given the Serverless stack / When the roles of the functions that sent requests are read
    template = synthesized.templates[DEV]
    (collection_id,) = cfn.resources(template, "AWS::OpenSearchServerless::Collection")
    missing = [
        folder
        for folder in index_users(serverless_requests)
        if not any(
            "aoss:APIAccessAll" in cfn.actions(s) and f"<{collection_id}.Arn>" in cfn.listed(s["Resource"])
            for s in role_statements(template, folder)
        )
    ]
    # Then IAM lets each of them reach the collection (the data-access policy decides the rest)
    assert missing == []


def test_the_operators_commands_are_within_what_search_admin_principals_grants_on_serverless(
    synthesized: Synthesized, serverless_requests: Played
) -> None:
    # Given a Serverless stack with an operator in searchAdminPrincipals, and what create-index,
    # create-index --recreate, reindex and reindex --reembed send
    template = synthesized.templates[MORE_ROUTES]
    sent = serverless_requests[OPERATOR_ACTOR]
    assert {request.method for request in sent} == {"HEAD", "PUT", "DELETE", "POST"}
    # When each is looked up in the data-access policy for the operator / Then all are allowed
    assert denied_on_serverless(sent, template, OPERATOR) == []


def test_the_operators_commands_are_within_the_domains_access_policy_for_them(
    synthesized: Synthesized, domain_requests: Played
) -> None:
    # Given a domain stack with an operator in searchAdminPrincipals
    template = synthesized.templates[PROD]
    for_operator = [
        s for s in domain_policy_statements(template) if OPERATOR in cfn.listed(s["Principal"]["AWS"])
    ]
    # When the operator's requests are matched with the domain's access policy / Then all pass
    assert denied_on_domain(domain_requests[OPERATOR_ACTOR], for_operator, domain_arn(template)) == []


def test_without_search_admin_principals_no_operator_is_granted_anything(synthesized: Synthesized) -> None:
    # Given the default stacks (no searchAdminPrincipals)
    # When their data-access policy and domain access policy are read / Then they name no operator
    assert all(OPERATOR not in rule["Principal"] for rule in data_rules(synthesized.templates[DEV]))
    assert domain_policy_statements(synthesized.templates[DEV_DOMAIN]) == []


def test_a_search_at_the_domains_root_is_outside_every_functions_grants(synthesized: Synthesized) -> None:
    # Given the request the adapter sent before the index was in the msearch path
    root_msearch = Request("POST", "/_msearch", {}, [])
    template = synthesized.templates[DEV_DOMAIN]
    # When it is checked for retrieve's role / Then IAM would refuse it (a 403 on AWS)
    assert denied_on_domain([root_msearch], role_statements(template, "retrieve"), domain_arn(template)) == [
        f"es:ESHttpPost {domain_arn(template)}/_msearch"
    ]
