"""Each function is told exactly what memory_engine.settings needs for what it does."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.infra import cfn
from tests.infra.variants import CHAT_MODEL, LLM_SECRET

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
# Set in every function: what the runtime itself is told, beside each function's own settings.
RUNTIME = {*POWERTOOLS, "POWERTOOLS_LOG_LEVEL", "PYDANTIC_DISABLE_PLUGINS"}


def env(template: dict[str, Any], folder: str) -> dict[str, Any]:
    return cfn.environment(template, cfn.functions_by_folder(template)[folder])


def test_every_function_names_its_service_and_metrics_namespace(dev: dict[str, Any]) -> None:
    for name, body in cfn.resources(dev, "AWS::Lambda::Function").items():
        if body["Properties"].get("Handler", "").startswith("framework."):
            continue  # CDK's own Provider framework function (Node.js, no Powertools)
        variables = cfn.environment(dev, name)
        assert variables["POWERTOOLS_SERVICE_NAME"] == "memory-engine", name
        assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "MemoryEngine", name


def test_every_python_function_skips_pydantics_plugin_scan(dev: dict[str, Any]) -> None:
    # Given every function of the template but CDK's own (Node.js) ones
    for name, body in cfn.resources(dev, "AWS::Lambda::Function").items():
        if body["Properties"].get("Handler", "").startswith("framework."):
            continue
        # Then its cold start does not scan the installed distributions for pydantic plugins
        assert cfn.environment(dev, name)["PYDANTIC_DISABLE_PLUGINS"] == "__all__", name


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
    assert set(env(dev, "health")) == RUNTIME


def test_the_authorizer_gets_only_the_table(dev: dict[str, Any]) -> None:
    assert set(env(dev, "authorizer")) - RUNTIME == {
        "MEMORY_ENGINE_BACKEND",
        "MEMORY_ENGINE_TABLE_NAME",
    }


def test_the_worker_knows_its_retry_budget_and_extractor(dev: dict[str, Any]) -> None:
    variables = env(dev, "extraction_worker")
    # 3 attempts per job (issue 19): under the redrive's 5, so the worker parks the job itself.
    assert variables["MEMORY_ENGINE_WORKER_MAX_RECEIVES"] == "3"
    assert variables["MEMORY_ENGINE_EXTRACTOR"] == "builtin"
    assert "MEMORY_ENGINE_EXTRACTOR" not in env(dev, "consolidate")


def test_llm_extraction_is_told_the_secret_of_its_key_not_the_key(prod: dict[str, Any]) -> None:
    variables = env(prod, "extraction_worker")
    assert variables["MEMORY_ENGINE_EXTRACTOR"] == "llm"
    assert variables["MEMORY_ENGINE_LLM_MODEL"] == "gpt-4o-mini"
    assert variables["OPENAI_BASE_URL"] == "https://llm.example.com/v1"
    # the secret's name: the function reads the key itself at run time
    assert variables["MEMORY_ENGINE_OPENAI_API_KEY_SECRET"] == LLM_SECRET
    assert "OPENAI_API_KEY" not in variables
    assert variables["MEMORY_ENGINE_OPENSEARCH_SERVICE"] == "es"
    assert cfn.render(variables["MEMORY_ENGINE_OPENSEARCH_URL"]).startswith("https://")


# What a credential's variable or value looks like; a variable naming a secret ends in _SECRET.
CREDENTIAL_NAME = re.compile(r"(API_?KEY|TOKEN|PASSWORD|PASSWD|SECRET_ACCESS|PRIVATE_KEY|CREDENTIAL)")
CREDENTIAL_VALUE = re.compile(
    r"\{\{resolve:(secretsmanager|ssm-secure):"  # a dynamic reference: the value in plain text
    r"|sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|BEGIN [A-Z ]*PRIVATE KEY"
)


def secret_looking(name: str, value: Any) -> bool:
    text = json.dumps(value)
    if CREDENTIAL_VALUE.search(text):
        return True
    return bool(CREDENTIAL_NAME.search(name)) and not name.endswith("_SECRET")


def test_no_function_environment_of_any_variant_holds_a_secret(templates: dict[str, dict[str, Any]]) -> None:
    # Given every synthesized variant (the llm ones name an LLM key's secret)
    found = [
        (stack, function, name)
        for stack, template in templates.items()
        for function in cfn.resources(template, "AWS::Lambda::Function")
        for name, value in cfn.environment(template, function).items()
        if secret_looking(name, value)
    ]
    # Then no variable is, or resolves at deploy to, a key, a token or a password
    assert found == []


def test_the_secret_check_sees_a_resolved_secret_and_a_key_variable() -> None:
    assert secret_looking("OPENAI_API_KEY", "{{resolve:secretsmanager:memory-engine/openai:SecretString:::}}")
    assert secret_looking("OPENAI_API_KEY", {"Ref": "SomeParameter"})
    assert secret_looking("ANYTHING", "sk-proj-0123456789abcdefABCDEF")
    assert not secret_looking("MEMORY_ENGINE_OPENAI_API_KEY_SECRET", "memory-engine/openai")


def test_the_chat_model_from_context_reaches_the_model_list_and_the_chat_route(
    dev: dict[str, Any], prod: dict[str, Any]
) -> None:
    # Given chatModel set in prod, unset in dev
    for folder in ("chat_models", "chat_completions"):
        assert env(prod, folder)["MEMORY_ENGINE_CHAT_MODEL"] == CHAT_MODEL
        assert "MEMORY_ENGINE_CHAT_MODEL" not in env(dev, folder)
    # Then GET /v1/models, whose function needs nothing else, is told only that
    assert {name for name in env(prod, "chat_models") if name.startswith("MEMORY_ENGINE_")} == {
        "MEMORY_ENGINE_CHAT_MODEL"
    }
    # and no other function is
    for folder in cfn.functions_by_folder(prod):
        if folder not in ("chat_models", "chat_completions"):
            assert "MEMORY_ENGINE_CHAT_MODEL" not in env(prod, folder), folder


def test_the_model_list_answers_the_model_the_synthesized_environment_names(
    prod: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_engine.settings import ChatSettings
    from memory_engine.usecases import chat_models

    for name, value in env(prod, "chat_models").items():
        monkeypatch.setenv(name, str(value))
    assert [card.id for card in chat_models.list_models(ChatSettings()).data] == [CHAT_MODEL]
