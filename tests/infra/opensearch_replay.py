"""Every function that reaches the search index, played through its handler with its events/
sample over an engine whose index is the OpenSearch adapter on a stub transport, and the
operators' commands (create-index, reindex, reindex --reembed): what HTTP requests each sends.

One engine carries state from step to step (a turn consolidated, extracted, forked, deleted; a
fact created, retrieved, corrected, deleted; a chat user remembered and forgotten), so that each function
takes its index path rather than stopping at an empty store. Jobs a step queues are delivered to
the worker's handler and counted as the worker's requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.adapters.openai.upstream import HttpChatUpstream
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.settings import reset_settings
from memory_engine_app import cli
from memory_engine_app.server.apigw import LocalContext
from tests.fakes.engine import fake_engine
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion
from tests.fakes.opensearch import Request, StubCluster
from tests.fakes.ports import ListQueue
from tests.handlers.conftest import load_event
from tests.handlers.dialects import call, sample_body

WORKER = "extraction_worker"
OPERATOR = "operator"  # a principal of searchAdminPrincipals running the CLI by hand
# A stored copy every search finds, so that deletes reach their bulk request.
STORED = [{"_id": "copy-1", "doc_id": "m1"}]

Played = dict[str, list[Request]]


def play(service: str, monkeypatch: pytest.MonkeyPatch) -> Played:
    """Actor (function folder, or OPERATOR) → the requests it sent, on an index of `service`."""
    cluster = StubCluster(stored=list(STORED))
    engine = fake_engine()
    index = OpenSearchIndex(
        "https://stub", dimension=engine.embedder.dimension, service=service, client=cluster.client()
    )
    engine.index = index
    # The operators' `create-index` builds its adapter from configuration: this one, on the stub.
    monkeypatch.setenv("MEMORY_ENGINE_OPENSEARCH_URL", index.url)
    monkeypatch.setattr(wiring, "build_index", lambda settings, store=None: index)
    reset_settings()
    played: Played = {}
    with _installed(engine), FakeOpenAIServer() as upstream:
        engine.chat = HttpChatUpstream(upstream.base_url, api_key="upstream-key", timeout_s=5)
        upstream.script(*[(200, chat_completion("Pepper is a lovely name."))] * 2)
        for actor, step in _steps(engine):
            before = len(cluster.requests)
            step()
            played.setdefault(actor, []).extend(cluster.requests[before:])
            before = len(cluster.requests)
            _deliver(engine)
            played.setdefault(WORKER, []).extend(cluster.requests[before:])
    return played


@contextmanager
def _installed(engine: Engine) -> Iterator[None]:
    wiring.use(engine)
    try:
        yield
    finally:
        wiring.use(None)
        reset_settings()


def _steps(engine: Engine) -> Iterator[tuple[str, Callable[[], object]]]:
    yield "index_bootstrap", _bootstrap
    yield "consolidate", lambda: _ok(call("consolidate", _turn("dialog-1")))
    yield WORKER, _extract  # a memory of dialog-1 alone: the fork at dialog-1 copies it
    for uuid in ("dialog-2", "dialog-3"):
        yield "consolidate", lambda uuid=uuid: _ok(call("consolidate", _turn(uuid)))
    yield "retrieve", lambda: _ok(call("retrieve"))
    yield "fork", lambda: _ok(call("fork"))
    yield "delete", lambda: _ok(call("delete"))
    created: dict[str, str] = {}
    yield "bank_create", lambda: created.update(id=_ok(call("bank_create"))["name"].split("/")[-1])
    yield "bank_retrieve", lambda: _ok(call("bank_retrieve"))
    yield "bank_generate", lambda: _ok(call("bank_generate"))
    yield (  # a corrected wording is re-embedded and re-indexed
        "bank_patch",
        lambda: _ok(
            call("bank_patch", path=f"/v1/memories/{created['id']}", path_parameters={"id": created["id"]})
        ),
    )
    yield (
        "bank_delete",
        lambda: _ok(
            call("bank_delete", path=f"/v1/memories/{created['id']}", path_parameters={"id": created["id"]})
        ),
    )
    for _ in range(2):  # the second finds what the worker remembered of the first
        yield "chat_completions", lambda: _ok(call("chat_completions"))
    yield "forget_user", lambda: _ok(call("forget_user"))
    for argv in (["create-index"], ["create-index", "--recreate"], ["reindex"], ["reindex", "--reembed"]):
        yield OPERATOR, lambda argv=argv: _command(argv)


def _turn(uuid: str) -> dict[str, Any]:
    body = sample_body("consolidate")
    return {**body, "new_dialog": {**body["new_dialog"], "uuid": uuid}}


def _ok(answer: Any) -> dict[str, Any]:
    assert 200 <= answer.status < 300, answer.text
    return dict(answer.json)


def _bootstrap() -> None:
    from functions.index_bootstrap.handler import lambda_handler

    lambda_handler({"RequestType": "Create"}, LocalContext())


def _extract() -> None:
    """The worker's sample event, forced: the session's first turn becomes a memory."""
    event = load_event(WORKER)
    record = event["Records"][0]
    event["Records"] = [{**record, "body": json.dumps({**json.loads(record["body"]), "force": True})}]
    _worker(event)


def _deliver(engine: Engine) -> None:
    """The jobs a step queued, each handed to the worker's handler as SQS would."""
    assert isinstance(engine.queue, ListQueue)
    while jobs := engine.queue.pop_all():
        record = load_event(WORKER)["Records"][0]
        _worker({"Records": [{**record, "body": job.model_dump_json()} for job in jobs]})


def _worker(event: dict[str, Any]) -> None:
    from functions.extraction_worker.handler import lambda_handler

    answer = lambda_handler(event, LocalContext())
    assert answer == {"batchItemFailures": []}, answer


def _command(argv: list[str]) -> None:
    assert cli.main(argv) == 0, argv
