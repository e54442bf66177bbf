"""The remote embedder, wired to the embedding function's real handler through a fake Lambda client."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from functions.embedder_image import handler as embedding_function
from memory_engine.adapters.aws.remote_embedder import RemoteEmbedder
from memory_engine.errors import InvalidInput, Unavailable
from memory_engine.settings import reset_settings
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.ports import HashEmbedder


class FakeLambda:
    """Lambda Invoke, answered in process by a handler; records each payload."""

    def __init__(self, handler: Any = None, function_error: str | None = None) -> None:
        self.handler = handler or embedding_function.lambda_handler
        self.function_error = function_error
        self.payloads: list[dict[str, Any]] = []

    def invoke(self, FunctionName: str, Payload: bytes) -> dict[str, Any]:
        request = json.loads(Payload)
        self.payloads.append(request)
        answer = self.handler(request, LocalContext())
        response: dict[str, Any] = {"StatusCode": 200, "Payload": io.BytesIO(json.dumps(answer).encode())}
        if self.function_error:
            response["FunctionError"] = self.function_error
        return response


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> HashEmbedder:
    """The model inside the embedding function (a hashed bag of words, 8 dimensions)."""
    model = HashEmbedder(dimension=8)
    monkeypatch.setattr(embedding_function, "embedder", lambda: model)
    return model


def test_texts_are_embedded_by_the_function_in_batches_and_in_order(model: HashEmbedder) -> None:
    # Given a remote embedder sending 2 texts per call
    fake = FakeLambda()
    remote = RemoteEmbedder(dimension=8, function_name="embedder", batch_size=2, aws_client=fake)
    texts = ["apples in the orchard", "a broken bicycle", "jazz downtown", "sailing lessons", "the cat"]

    # When five passages are embedded
    vectors = remote.embed(texts, mode="passage")

    # Then the model's vectors come back in order, from three calls that carried the mode
    assert [[round(x, 6) for x in v] for v in vectors] == [
        [round(x, 6) for x in v] for v in model.embed(texts)
    ]
    assert [len(p["texts"]) for p in fake.payloads] == [2, 2, 1]
    assert {p["mode"] for p in fake.payloads} == {"passage"}


def test_an_answer_of_another_dimension_fails_loudly_naming_the_setting(model: HashEmbedder) -> None:
    remote = RemoteEmbedder(dimension=384, function_name="embedder", aws_client=FakeLambda())

    with pytest.raises(Unavailable, match="MEMORY_ENGINE_EMBEDDING_DIMENSION"):
        remote.embed(["hello"])


CRASH = {"errorMessage": "boom in /var/task/model.py", "stackTrace": ['File "/var/task/model.py"']}


@pytest.fixture
def crashing() -> RemoteEmbedder:
    """An embedding function that crashes, answering its error and stack trace."""
    fake = FakeLambda(handler=lambda *_: CRASH, function_error="Unhandled")
    return RemoteEmbedder(dimension=8, function_name="acme-private-embedder", aws_client=fake)


@pytest.fixture
def debug_logging(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MEMORY_ENGINE_LOG_LEVEL", "DEBUG")
    reset_settings()
    yield
    reset_settings()


def test_a_function_error_is_unavailable_naming_neither_the_function_nor_its_error_except_in_the_log(
    crashing: RemoteEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    # When texts are embedded by a crashing function
    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        crashing.embed(["hello"])

    # Then the caller learns the embedding model failed; the log names the function and the failure
    message = raised.value.message
    assert "embedding model failed" in message and "Unhandled" in message
    assert "acme-private-embedder" not in message and "/var/task" not in message
    [record] = caplog.records
    assert record.resource == "Lambda function acme-private-embedder"  # type: ignore[attr-defined]
    # ...but not the error body, which may quote the texts, outside debug logging
    assert record.error == "FunctionError Unhandled"  # type: ignore[attr-defined]


def test_with_debug_logging_the_log_has_the_functions_error_body(
    crashing: RemoteEmbedder, debug_logging: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        crashing.embed(["hello"])

    assert "/var/task" not in raised.value.message
    assert [CRASH["errorMessage"] in record.error for record in caplog.records] == [True]  # type: ignore[attr-defined]


def test_a_batch_the_function_refuses_is_invalid_input(model: HashEmbedder) -> None:
    # Given a batch size above what the function takes (256 texts)
    remote = RemoteEmbedder(dimension=8, function_name="embedder", batch_size=300, aws_client=FakeLambda())

    # Then its refusal, which names the field, surfaces as invalid input
    with pytest.raises(InvalidInput, match="texts"):
        remote.embed(["hello"] * 300)


def test_throttling_by_lambda_is_unavailable_naming_the_code_but_not_the_function(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Throttled:
        def invoke(self, **_: Any) -> Any:
            raise ClientError(
                {"Error": {"Code": "TooManyRequestsException", "Message": "Rate exceeded"}}, "Invoke"
            )

    remote = RemoteEmbedder(dimension=8, function_name="acme-private-embedder", aws_client=Throttled())

    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        remote.embed(["hello"])

    assert "TooManyRequestsException" in raised.value.message and "retry" in raised.value.message
    assert "acme-private-embedder" not in raised.value.message
    assert [record.resource for record in caplog.records] == [  # type: ignore[attr-defined]
        "Lambda function acme-private-embedder"
    ]


def test_a_sagemaker_answer_of_another_dimension_names_the_setting_but_not_the_endpoint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class WrongSize:
        def invoke_endpoint(self, **_: Any) -> dict[str, Any]:
            return {"Body": io.BytesIO(json.dumps([[1.0, 0.0, 0.0]]).encode())}

    remote = RemoteEmbedder(dimension=2, sagemaker_endpoint="acme-private-minilm", aws_client=WrongSize())

    with caplog.at_level(logging.WARNING, "memory_engine.aws"), pytest.raises(Unavailable) as raised:
        remote.embed(["one"])

    assert "MEMORY_ENGINE_EMBEDDING_DIMENSION" in raised.value.message
    assert "acme-private-minilm" not in raised.value.message
    assert [record.resource for record in caplog.records] == [  # type: ignore[attr-defined]
        "SageMaker endpoint acme-private-minilm"
    ]


def test_a_sagemaker_endpoint_gets_the_same_request_and_may_answer_a_bare_list() -> None:
    class FakeSageMaker:
        def __init__(self) -> None:
            self.bodies: list[dict[str, Any]] = []

        def invoke_endpoint(self, EndpointName: str, Body: bytes, **_: Any) -> dict[str, Any]:
            self.bodies.append(json.loads(Body))
            return {"Body": io.BytesIO(json.dumps([[3.0, 4.0], [0.0, 2.0]]).encode())}

    fake = FakeSageMaker()
    remote = RemoteEmbedder(dimension=2, sagemaker_endpoint="minilm", aws_client=fake)

    vectors = remote.embed(["one", "two"], mode="query")

    assert vectors == [[0.6, 0.8], [0.0, 1.0]]  # unit length whatever the endpoint returns
    assert fake.bodies == [{"texts": ["one", "two"], "mode": "query"}]


def test_a_tei_endpoint_gets_hugging_faces_request_and_its_list_is_read() -> None:
    # Given a stock Hugging Face TEI endpoint on SageMaker: {"inputs": [...]} in, a list out
    class FakeTei:
        def __init__(self) -> None:
            self.bodies: list[dict[str, Any]] = []

        def invoke_endpoint(self, EndpointName: str, Body: bytes, **_: Any) -> dict[str, Any]:
            self.bodies.append(json.loads(Body))
            if "inputs" not in self.bodies[-1]:  # what TEI answers any other body
                refusal = b'{"error": "missing field `inputs`", "error_type": "Validation"}'
                return {"Body": io.BytesIO(refusal)}
            return {"Body": io.BytesIO(json.dumps([[3.0, 4.0], [0.0, 2.0]]).encode())}

    fake = FakeTei()
    remote = RemoteEmbedder(dimension=2, sagemaker_endpoint="bge", aws_client=fake, request_shape="tei")

    # When texts are embedded, then they are sent as TEI wants them, truncated rather than refused
    assert remote.embed(["one", "two"], mode="query") == [[0.6, 0.8], [0.0, 1.0]]
    assert fake.bodies == [{"inputs": ["one", "two"], "truncate": True}]
    # and the engine's own shape fails there with TEI's words, not a silent wrong vector
    engine_shaped = RemoteEmbedder(dimension=2, sagemaker_endpoint="bge", aws_client=fake)
    with pytest.raises(InvalidInput, match="missing field `inputs`"):
        engine_shaped.embed(["one"])


def test_the_request_shape_comes_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_engine.composition.providers.embedders import sagemaker_endpoint
    from memory_engine.settings import EmbeddingSettings

    monkeypatch.setenv("MEMORY_ENGINE_SAGEMAKER_ENDPOINT", "bge")
    monkeypatch.setenv("MEMORY_ENGINE_SAGEMAKER_REQUEST", "tei")
    built = sagemaker_endpoint(EmbeddingSettings(embedder="sagemaker"))
    assert built._request(["one"], "passage") == {"inputs": ["one"], "truncate": True}
