"""The backend switch: settings fail fast naming what is missing; wiring picks the AWS adapters;
the CLI bootstraps and rebuilds the OpenSearch index from DynamoDB."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from memory_engine.adapters.aws.apigateway_usage_plan import ApiGatewayUsagePlanKeys, MissingUsagePlan
from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder
from memory_engine.adapters.aws.sqs_queue import SqsQueue
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.adapters.local.usage_plan import NoUsagePlan
from memory_engine.composition import key_wiring, wiring
from memory_engine.embedding import BoundedEmbedder
from memory_engine.engine import Engine
from memory_engine.errors import Unavailable
from memory_engine.settings import KeySettings, Settings, reset_settings
from memory_engine_app import cli
from tests.contract.builders import append_turns, make_memory, make_session
from tests.fakes.aws import TABLE
from tests.fakes.opensearch import StubCluster

AWS = {
    "MEMORY_ENGINE_BACKEND": "aws",
    "MEMORY_ENGINE_TABLE_NAME": TABLE,
    "MEMORY_ENGINE_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/memory-engine-extraction.fifo",
}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Set variables for the test; settings and the built engine are forgotten before and after."""
    reset_settings()
    wiring.reset()
    yield monkeypatch
    monkeypatch.undo()
    reset_settings()
    wiring.reset()


def configured(env: pytest.MonkeyPatch, **variables: str) -> Settings:
    for name, value in variables.items():
        env.setenv(name, value)
    return Settings()


def test_the_aws_backend_without_its_table_and_queue_fails_naming_both(env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError) as raised:
        configured(env, MEMORY_ENGINE_BACKEND="aws")

    assert "MEMORY_ENGINE_TABLE_NAME" in str(raised.value)
    assert "MEMORY_ENGINE_QUEUE_URL" in str(raised.value)


def test_inside_lambda_the_aws_backend_needs_opensearch(env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="MEMORY_ENGINE_OPENSEARCH_URL"):
        configured(env, **AWS, AWS_LAMBDA_FUNCTION_NAME="memory-engine-retrieve")


def test_outside_lambda_the_aws_backend_may_run_without_opensearch(env: pytest.MonkeyPatch) -> None:
    assert configured(env, **AWS).opensearch_url is None


def test_the_authorizers_piece_in_lambda_needs_only_the_table(env: pytest.MonkeyPatch) -> None:
    # Given the authorizer's environment: the table, no queue, no index
    for name, value in {
        "MEMORY_ENGINE_BACKEND": "aws",
        "MEMORY_ENGINE_TABLE_NAME": TABLE,
        "AWS_LAMBDA_FUNCTION_NAME": "memory-engine-authorizer",
    }.items():
        env.setenv(name, value)

    # When it reads the piece it needs / Then that is complete, and its key store is the table
    assert isinstance(key_wiring.build_key_store(KeySettings()), DynamoDbKeyStore)


def test_the_authorizers_environment_builds_no_engine(env: pytest.MonkeyPatch) -> None:
    # Given the authorizer's environment outside Lambda: the table alone
    env.setenv("MEMORY_ENGINE_BACKEND", "aws")
    env.setenv("MEMORY_ENGINE_TABLE_NAME", TABLE)

    # When an engine is asked for / Then the configuration names what an engine would need
    with pytest.raises(ValidationError, match="MEMORY_ENGINE_QUEUE_URL"):
        wiring.engine()


@pytest.mark.parametrize(
    ("variables", "adapter"),
    [
        ({}, NoUsagePlan),
        ({**AWS, "MEMORY_ENGINE_USAGE_PLAN_ID": "abc123"}, ApiGatewayUsagePlanKeys),
        (AWS, MissingUsagePlan),
    ],
)
def test_the_usage_plan_adapter_follows_the_backend_and_the_plan_id(
    env: pytest.MonkeyPatch, variables: dict[str, str], adapter: type
) -> None:
    assert isinstance(key_wiring.build_usage_plan_keys(configured(env, **variables)), adapter)


@pytest.mark.parametrize(
    ("embedder", "variable"),
    [("sagemaker", "MEMORY_ENGINE_SAGEMAKER_ENDPOINT"), ("lambda", "MEMORY_ENGINE_EMBEDDING_FUNCTION_NAME")],
)
def test_a_remote_embedder_without_its_target_fails_naming_the_variable(
    env: pytest.MonkeyPatch, embedder: str, variable: str
) -> None:
    # The provider's own settings: read when it is chosen, not by every process that embeds
    settings = configured(env, MEMORY_ENGINE_EMBEDDER=embedder)

    with pytest.raises(ValidationError, match=variable):
        wiring.build_embedder(settings)


def test_a_configuration_error_never_echoes_the_environment(env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError) as raised:
        configured(env, MEMORY_ENGINE_BACKEND="aws", OPENAI_API_KEY="sk-secret-value")

    assert "sk-secret-value" not in str(raised.value)


def test_the_aws_backend_wires_the_aws_adapters_without_calling_aws(env: pytest.MonkeyPatch) -> None:
    settings = configured(
        env,
        **AWS,
        MEMORY_ENGINE_OPENSEARCH_URL="https://abc.us-east-1.aoss.amazonaws.com",
        MEMORY_ENGINE_EMBEDDER="lambda",
        MEMORY_ENGINE_EMBEDDING_FUNCTION_NAME="memory-engine-embedder",
        MEMORY_ENGINE_EMBEDDING_DIMENSION="1024",
    )

    store = wiring.build_store(settings)
    index = wiring.build_index(settings, store)
    embedder = wiring.build_embedder(settings)

    assert isinstance(store, DynamoDbStore) and store.table.name == TABLE
    assert isinstance(wiring.build_queue(settings), SqsQueue)
    assert isinstance(index, OpenSearchIndex) and (index.service, index.dimension) == ("aoss", 1024)
    assert isinstance(embedder, BoundedEmbedder) and isinstance(embedder.inner, RemoteEmbedder)
    assert embedder.dimension == 1024


def test_without_opensearch_the_aws_backend_searches_an_index_rebuilt_from_dynamodb(
    env: pytest.MonkeyPatch, engine: Engine
) -> None:
    # Given a memory in DynamoDB (on moto)
    append_turns(engine.store, make_session(), "d1")
    memory = make_memory("d1", embedding=[1.0, 0.0, 0.0, 0.0])
    engine.store.save_memory(memory)

    # When the engine is wired from the environment without an OpenSearch URL
    index = wiring.build_index(configured(env, **AWS), engine.store)

    # Then the local index holds what the table holds
    assert isinstance(index, LocalSearchIndex)
    assert index.get(memory.tenant, memory.memory_id) is not None


def test_reindex_rebuilds_opensearch_from_dynamodb(
    env: pytest.MonkeyPatch, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given two memories in DynamoDB and an OpenSearch endpoint (a stub transport)
    append_turns(engine.store, make_session(), "d1", "d2")
    for uuid, seq in [("d1", 0), ("d2", 1)]:
        engine.store.save_memory(make_memory(uuid, first_seq=seq, embedding=[0.0] * 383 + [1.0]))
    cluster = StubCluster()
    configured(
        env,
        **AWS,
        MEMORY_ENGINE_OPENSEARCH_URL="https://search.example.com",
        MEMORY_ENGINE_OPENSEARCH_SERVICE="es",
    )
    env.setattr(
        wiring,
        "build_index",
        lambda s, store=None: OpenSearchIndex(s.opensearch_url, service="es", client=cluster.client()),
    )

    # When the reindex command runs
    status = cli.main(["reindex"])

    # Then the index was cleared and both memories bulk-indexed, with a count at the end
    assert status == 0
    indexed = [line for bulk in cluster.sent("_bulk") for line in bulk.bodies if line.get("kind") == "memory"]
    assert sorted(line["doc_id"] for line in indexed) == sorted(
        m.memory_id for m in engine.store.iter_memories()
    )
    assert "indexed 2 memories" in capsys.readouterr().err


def test_reindex_rebuilds_the_index_the_server_uses_opensearch_beside_the_local_store(
    env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the local backend configured with an OpenSearch endpoint: the server searches OpenSearch
    cluster = StubCluster()
    configured(
        env, MEMORY_ENGINE_DATA_DIR=str(tmp_path), MEMORY_ENGINE_OPENSEARCH_URL="https://search.example.com"
    )
    env.setattr(
        wiring,
        "build_index",
        lambda s, store=None: OpenSearchIndex(s.opensearch_url, client=cluster.client()),
    )

    # When the reindex command runs
    status = cli.main(["reindex"])

    # Then it rebuilt OpenSearch (cleared it), not the local index files
    assert status == 0, capsys.readouterr().err
    assert cluster.requests
    assert not list(tmp_path.glob("*.index"))


def test_reindex_of_an_index_rebuilt_at_every_start_is_refused_naming_the_setting(
    env: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured(env, MEMORY_ENGINE_DATA_DIR=str(tmp_path), MEMORY_ENGINE_INDEX="memory")

    assert cli.main(["reindex"]) == 2
    assert "MEMORY_ENGINE_INDEX=memory" in capsys.readouterr().err


def test_create_index_is_a_command_that_names_the_missing_endpoint(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    configured(env, **AWS)

    assert cli.main(["create-index"]) == 2
    assert "MEMORY_ENGINE_OPENSEARCH_URL" in capsys.readouterr().err


def test_create_index_creates_the_mapping_once(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = StubCluster()
    configured(env, **AWS, MEMORY_ENGINE_OPENSEARCH_URL="https://search.example.com")
    env.setattr(
        wiring,
        "build_index",
        lambda s, store=None: OpenSearchIndex(s.opensearch_url, client=cluster.client()),
    )

    assert cli.main(["create-index"]) == 0

    assert [r.method for r in cluster.requests] == ["HEAD", "PUT"]
    assert "created" in capsys.readouterr().err


def test_create_index_given_an_index_that_is_not_opensearch_fails_with_a_message_not_an_assert(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the OpenSearch choice, but a factory map that builds some other index
    configured(env, **AWS, MEMORY_ENGINE_OPENSEARCH_URL="https://search.example.com")
    env.setattr(wiring, "build_index", lambda s, store=None: LocalSearchIndex())

    # When the index is to be created / Then the command fails naming what it got, under -O too
    assert cli.main(["create-index"]) == 1
    assert "built a LocalSearchIndex, not the OpenSearch index" in capsys.readouterr().err


def test_bootstrapping_the_index_builds_the_index_alone_not_the_engine(env: pytest.MonkeyPatch) -> None:
    # Given the OpenSearch choice, and an engine whose store, model and LLM must not be built
    configured(env, **AWS, MEMORY_ENGINE_OPENSEARCH_URL="https://search.example.com")
    cluster = StubCluster()
    env.setattr(
        wiring,
        "build_index",
        lambda s, store=None: OpenSearchIndex(s.opensearch_url, client=cluster.client()),
    )
    for builder in ("assemble", "build_store", "build_queue", "build_embedder", "build_extractor"):
        env.setattr(wiring, builder, _never(builder))

    # When the deploy-time custom resource bootstraps the index
    wiring.bootstrap_index()

    # Then the index was created with no engine built
    assert [r.method for r in cluster.requests] == ["HEAD", "PUT"]


def test_bootstrapping_an_index_that_needs_no_creation_names_the_setting(env: pytest.MonkeyPatch) -> None:
    configured(env, **AWS, MEMORY_ENGINE_INDEX="memory")

    with pytest.raises(Unavailable, match="MEMORY_ENGINE_INDEX=memory"):
        wiring.bootstrap_index()


def _never(name: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"bootstrap_index built {name}")

    return refuse


def test_a_bad_configuration_makes_the_cli_exit_with_the_message(
    env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env.setenv("MEMORY_ENGINE_BACKEND", "aws")

    assert cli.main(["reindex"]) == 2
    assert "MEMORY_ENGINE_TABLE_NAME" in capsys.readouterr().err
