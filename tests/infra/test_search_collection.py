"""Search: the serverless vector collection and its policies, or the managed domain by flag."""

from __future__ import annotations

import json
from typing import Any

from infra.access import FUNCTION_NEEDS, Need
from memory_engine.adapters.aws.opensearch_bodies import added_fields
from tests.infra import cfn
from tests.infra.variants import OPERATOR


def policies(template: dict[str, Any], kind: str) -> list[Any]:
    return [
        json.loads(cfn.render(body["Properties"]["Policy"]))
        for body in cfn.resources(template, "AWS::OpenSearchServerless::SecurityPolicy").values()
        if body["Properties"]["Type"] == kind
    ]


def data_rules(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Data-access rule description → {"principals", "permissions"}, rendered."""
    (body,) = cfn.resources(template, "AWS::OpenSearchServerless::AccessPolicy").values()
    rules = json.loads(cfn.render(body["Properties"]["Policy"]))
    return {
        rule["Description"]: {"principals": rule["Principal"], "permissions": rule["Rules"][0]["Permission"]}
        for rule in rules
    }


def deployed(template: dict[str, Any]) -> set[str]:
    return set(cfn.functions_by_folder(template))


def role_arn(template: dict[str, Any], folder: str) -> str:
    return f"<{cfn.role_of(template, cfn.functions_by_folder(template)[folder])}.Arn>"


def test_the_default_index_is_a_vectorsearch_collection(dev: dict[str, Any]) -> None:
    (collection,) = cfn.resources(dev, "AWS::OpenSearchServerless::Collection").values()
    assert collection["Properties"]["Type"] == "VECTORSEARCH"
    assert collection["Properties"]["StandbyReplicas"] == "DISABLED"  # dev: half the OCUs


def test_the_collection_is_encrypted_and_reachable_only_through_its_policies(dev: dict[str, Any]) -> None:
    (encryption,) = policies(dev, "encryption")
    (network,) = policies(dev, "network")
    assert encryption["AWSOwnedKey"] is True
    assert encryption["Rules"] == [
        {"ResourceType": "collection", "Resource": ["collection/memory-engine-dev"]}
    ]
    assert network[0]["Rules"][0]["Resource"] == ["collection/memory-engine-dev"]
    (collection,) = cfn.resources(dev, "AWS::OpenSearchServerless::Collection").values()
    assert len(collection["DependsOn"]) == 2  # created after both policies


def test_each_role_gets_only_its_part_of_the_index(dev: dict[str, Any]) -> None:
    # Given the data-access policy / When its rules are read
    rules = data_rules(dev)
    # Then retrieve reads, the writers write, the bootstrap creates, and nobody else appears
    readers = [f for f, needs in FUNCTION_NEEDS.items() if Need.INDEX_READ in needs and f in deployed(dev)]
    writers = [f for f, needs in FUNCTION_NEEDS.items() if Need.INDEX_WRITE in needs and f in deployed(dev)]
    assert {"retrieve", "bank_retrieve"} <= set(readers)
    assert {"extraction_worker", "delete", "fork"} <= set(writers)
    assert sorted(rules["read the memories index"]["principals"]) == sorted(role_arn(dev, f) for f in readers)
    assert sorted(rules["write the memories index"]["principals"]) == sorted(
        role_arn(dev, f) for f in writers
    )
    assert rules["admin the memories index"]["principals"] == [role_arn(dev, "index_bootstrap")]
    assert "aoss:WriteDocument" not in rules["read the memories index"]["permissions"]
    everyone = {p for rule in rules.values() for p in rule["principals"]}
    assert role_arn(dev, "consolidate") not in everyone


def test_the_index_is_created_at_deploy_after_its_access_policy(dev: dict[str, Any]) -> None:
    (resource,) = cfn.resources(dev, "AWS::CloudFormation::CustomResource").values()
    (policy_id,) = cfn.resources(dev, "AWS::OpenSearchServerless::AccessPolicy")
    assert resource["Properties"]["Index"] == "memories"
    assert resource["Properties"]["Dimension"] == "384"
    # CDK's Provider framework answers CloudFormation; it calls the index_bootstrap function
    framework = cfn.render(resource["Properties"]["ServiceToken"]).strip("<>").removesuffix(".Arn")
    assert cfn.props(dev, framework)["Handler"] == "framework.onEvent"
    assert cfn.render(cfn.environment(dev, framework)["USER_ON_EVENT_FUNCTION_ARN"]) == (
        f"<{cfn.functions_by_folder(dev)['index_bootstrap']}.Arn>"
    )
    assert policy_id in resource["DependsOn"]


def test_a_field_added_to_the_mapping_reaches_the_index_before_its_writers(dev: dict[str, Any]) -> None:
    ((index_id, resource),) = cfn.resources(dev, "AWS::CloudFormation::CustomResource").items()
    # The mapping's later fields are a property: adding one re-runs the bootstrap on deploy
    assert resource["Properties"]["Fields"] == ",".join(sorted(added_fields()["properties"]))
    assert "half_vector" in resource["Properties"]["Fields"].split(",")
    # And every function that writes to the index waits for it; a reader does not need to
    functions = cfn.functions_by_folder(dev)
    writers = [f for f, needs in FUNCTION_NEEDS.items() if Need.INDEX_WRITE in needs and f in deployed(dev)]
    assert "extraction_worker" in writers
    lambdas = cfn.resources(dev, "AWS::Lambda::Function")
    for folder in writers:
        assert index_id in lambdas[functions[folder]].get("DependsOn", [])
    assert index_id not in lambdas[functions["retrieve"]].get("DependsOn", [])


def test_a_context_flag_swaps_the_collection_for_an_encrypted_domain(prod: dict[str, Any]) -> None:
    assert cfn.resources(prod, "AWS::OpenSearchServerless::Collection") == {}
    (domain,) = cfn.resources(prod, "AWS::OpenSearchService::Domain").values()
    properties = domain["Properties"]
    assert properties["EncryptionAtRestOptions"] == {"Enabled": True}
    assert properties["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert properties["DomainEndpointOptions"]["EnforceHTTPS"] is True
    cluster = properties["ClusterConfig"]
    assert (cluster["InstanceCount"], cluster["DedicatedMasterCount"]) == (2, 3)
    assert cluster["ZoneAwarenessEnabled"] is True


def test_a_dev_domain_is_one_node(dev_domain: dict[str, Any]) -> None:
    (domain,) = cfn.resources(dev_domain, "AWS::OpenSearchService::Domain").values()
    assert domain["Properties"]["ClusterConfig"]["InstanceCount"] == 1


def test_domain_access_is_scoped_to_the_memories_index(prod: dict[str, Any]) -> None:
    (domain_id,) = cfn.resources(prod, "AWS::OpenSearchService::Domain")
    role = cfn.role_of(prod, cfn.functions_by_folder(prod)["retrieve"])
    (statement,) = [s for s in cfn.statements(prod, role) if any(a.startswith("es:") for a in cfn.actions(s))]
    assert statement["Resource"] == [f"<{domain_id}.Arn>/memories", f"<{domain_id}.Arn>/memories/*"]
    assert "es:ESHttpDelete" not in cfn.actions(statement)


def test_no_function_is_granted_a_path_at_the_domains_root(prod: dict[str, Any]) -> None:
    # Given the domain / When every es: statement of every function's role is read
    (domain_id,) = cfn.resources(prod, "AWS::OpenSearchService::Domain")
    resources = {
        resource
        for function in cfn.functions_by_folder(prod).values()
        for statement in cfn.statements(prod, cfn.role_of(prod, function))
        if any(action.startswith("es:") for action in cfn.actions(statement))
        for resource in cfn.listed(statement["Resource"])
    }
    # Then each names the memories index or a path under it, nothing else of the domain
    assert resources == {f"<{domain_id}.Arn>/memories", f"<{domain_id}.Arn>/memories/*"}


def test_operators_of_search_admin_principals_get_a_rule_of_their_own_on_the_index(
    more_routes: dict[str, Any],
) -> None:
    # Given a Serverless stack deployed with searchAdminPrincipals
    rules = data_rules(more_routes)
    # When the operators' rule is read
    operators = rules["operate the memories index (create-index, reindex)"]
    # Then it names them alone, and lets them drop the index too (create-index --recreate), which
    # the deploy-time bootstrap may not; tests/infra/test_opensearch_grants.py replays what they send
    assert operators["principals"] == [OPERATOR]
    assert "aoss:DeleteIndex" in operators["permissions"]
    assert "aoss:DeleteIndex" not in rules["admin the memories index"]["permissions"]
