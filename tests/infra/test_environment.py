"""Each function is told exactly what memory_engine.settings needs for what it does."""

from __future__ import annotations

from typing import Any

from tests.infra import cfn

ENGINE = {
    "MEMORY_ENGINE_BACKEND",
    "MEMORY_ENGINE_TABLE_NAME",
    "MEMORY_ENGINE_QUEUE_URL",
    "MEMORY_ENGINE_OPENSEARCH_URL",
    "MEMORY_ENGINE_OPENSEARCH_SERVICE",
    "MEMORY_ENGINE_OPENSEARCH_INDEX",
    "MEMORY_ENGINE_EMBEDDER",
    "MEMORY_ENGINE_EMBEDDING_DIMENSION",
}
POWERTOOLS = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"}


def env(template: dict[str, Any], folder: str) -> dict[str, Any]:
    return cfn.environment(template, cfn.functions_by_folder(template)[folder])


def test_every_function_names_its_service_and_metrics_namespace(dev: dict[str, Any]) -> None:
    for name, body in cfn.resources(dev, "AWS::Lambda::Function").items():
        if body["Properties"].get("Handler", "").startswith("framework."):
            continue  # CDK's own Provider framework function (Node.js, no Powertools)
        variables = cfn.environment(dev, name)
        assert variables["POWERTOOLS_SERVICE_NAME"] == "memory-engine", name
        assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "MemoryEngine", name


def test_engine_functions_get_the_whole_aws_backend_configuration(dev: dict[str, Any]) -> None:
    (table_id,) = cfn.resources(dev, "AWS::DynamoDB::Table")
    (collection_id,) = cfn.resources(dev, "AWS::OpenSearchServerless::Collection")
    for folder in ("consolidate", "retrieve", "delete", "fork", "embed", "extraction_worker"):
        variables = env(dev, folder)
        assert set(variables) >= ENGINE, folder
        assert variables["MEMORY_ENGINE_BACKEND"] == "aws"
        assert variables["MEMORY_ENGINE_TABLE_NAME"] == {"Ref": table_id}
        assert variables["MEMORY_ENGINE_OPENSEARCH_SERVICE"] == "aoss"
        assert variables["MEMORY_ENGINE_OPENSEARCH_URL"] == {
            "Fn::GetAtt": [collection_id, "CollectionEndpoint"]
        }
        assert variables["MEMORY_ENGINE_OPENSEARCH_INDEX"] == "memories"
        assert variables["MEMORY_ENGINE_EMBEDDING_DIMENSION"] == "384"


def test_health_gets_no_backend_configuration(dev: dict[str, Any]) -> None:
    assert set(env(dev, "health")) == POWERTOOLS | {"POWERTOOLS_LOG_LEVEL"}


def test_the_authorizer_gets_only_the_table(dev: dict[str, Any]) -> None:
    assert set(env(dev, "authorizer")) - POWERTOOLS - {"POWERTOOLS_LOG_LEVEL"} == {
        "MEMORY_ENGINE_BACKEND",
        "MEMORY_ENGINE_TABLE_NAME",
        "MEMORY_ENGINE_KEYS_ONLY",  # so its settings ask for no queue and no index
    }


def test_the_worker_knows_its_retry_budget_and_extractor(dev: dict[str, Any]) -> None:
    variables = env(dev, "extraction_worker")
    # 3 attempts per job (issue 19): under the redrive's 5, so the worker parks the job itself.
    assert variables["MEMORY_ENGINE_WORKER_MAX_RECEIVES"] == "3"
    assert variables["MEMORY_ENGINE_EXTRACTOR"] == "builtin"
    assert "MEMORY_ENGINE_EXTRACTOR" not in env(dev, "consolidate")


def test_llm_extraction_reads_its_key_from_secrets_manager_at_deploy(prod: dict[str, Any]) -> None:
    variables = env(prod, "extraction_worker")
    assert variables["MEMORY_ENGINE_EXTRACTOR"] == "llm"
    assert variables["MEMORY_ENGINE_LLM_MODEL"] == "gpt-4o-mini"
    assert variables["OPENAI_BASE_URL"] == "https://llm.example.com/v1"
    # a dynamic reference: the key itself is never in the template
    assert variables["OPENAI_API_KEY"] == "{{resolve:secretsmanager:memory-engine/openai:SecretString:::}}"
    assert variables["MEMORY_ENGINE_OPENSEARCH_SERVICE"] == "es"
    assert cfn.render(variables["MEMORY_ENGINE_OPENSEARCH_URL"]).startswith("https://")
