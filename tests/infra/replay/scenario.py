"""The sample events of events/ played in an order that makes each one meaningful: turns are
consolidated and extracted before they are retrieved, inspected, forked and deleted; a fact is
created before it is read, corrected, its revisions listed and deleted (and the key facts of the
extracted memory the retrieve found are read and one corrected); a chat exchange is
recorded (two facts of the user's) before its user is forgotten; a time question (`as_of`) about
a fact a later memory of its thread replaced, matching only the replaced one, reads the replacing
memory by id, and deleting that memory makes the replaced fact hold again.
Whatever a function queues is delivered to the worker (`drain`) before the next step, but where a
step says otherwise (a user forgotten while their exchange still waits in the queue). Beyond the
healthy path: a session whose extraction fails every time (retried, then dead-lettered), a
second session whose engine memory is deleted through the memory bank, a fork whose second
transaction fails (undone, then played again), and searches played again once the index has
settled (see replay/stack.py for the index, the clock and overflow parts).

Each step says what a success looks like for its function; `run` plays them all and keeps, for
every step, its outcome and the calls the function's role was refused.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

from memory_engine.adapters.aws import dynamodb_fork
from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.adapters.aws.dynamodb_table import DynamoTable
from memory_engine.errors import Unavailable
from memory_engine.usecases import keys
from tests.fakes.aws import REGION
from tests.infra.replay.stack import EMBEDDER_FAILS, SETTLE_SECONDS, TABLE, Call, ReplayStack

EVENTS = Path(__file__).resolve().parents[3] / "events"
WORKER = "extraction_worker"
TENANT = "tenant-a"
# Functions that make no AWS API call to replay: the index bootstrap speaks to OpenSearch over
# HTTP only (its paths and grants are checked by the OpenSearch tests).
NOT_REPLAYED = {"index_bootstrap": "talks to OpenSearch only (no moto data plane)"}


@dataclass(frozen=True)
class Step:
    function: str
    event: str | None  # an events/ file name; None delivers the queue to the worker
    edit: Callable[[dict[str, Any], dict[str, str]], None] | None = None
    # Played once the index shows what was written before (the clock moved past its settle
    # time): a search then finds facts through the index, not among the young ones.
    settled: bool = False
    # A failure of AWS's while the step runs (the step succeeds when the caller is told, 503,
    # and nothing was refused), to reach what the code does about it.
    fault: Callable[[], AbstractContextManager[Any]] | None = None
    # What the answer must show besides a 2xx, where the step is played to reach one path.
    expect: Callable[[dict[str, Any]], bool] | None = None

    @property
    def name(self) -> str:
        suffix = (":settled" if self.settled else "") + (":fault" if self.fault else "")
        return f"{self.function}:{self.event or 'queue'}" + suffix


@dataclass(frozen=True)
class Outcome:
    step: str
    succeeded: bool
    detail: str
    denied: list[Call]


def load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return loaded


def _with_key(event: dict[str, Any], state: dict[str, str]) -> None:
    header = f"Bearer {state['key']}"
    event["headers"]["Authorization"] = header
    event["multiValueHeaders"]["Authorization"] = [header]


def _with_fact(event: dict[str, Any], state: dict[str, str]) -> None:
    memory_id = state["fact"]
    event["pathParameters"] = {"id": memory_id}
    event["path"] = event["path"].rsplit("/", 1)[0] + "/" + memory_id
    event["requestContext"]["path"] = event["path"]


def _with_fact_revisions(event: dict[str, Any], state: dict[str, str]) -> None:
    """bank_get's sample turned into GET /v1/memories/{id}/revisions (the same function)."""
    _with_fact(event, state)
    event["path"] = event["requestContext"]["path"] = event["path"] + "/revisions"
    event["resource"] = event["requestContext"]["resourcePath"] = "/v1/memories/{id}/revisions"


def _with_key_facts(event: dict[str, Any], state: dict[str, str]) -> None:
    """bank_get's sample turned into GET /v1/memories/{id}/keyFacts on the extracted memory the
    retrieve found (the same function)."""
    memory_id = state["memory"]
    event["pathParameters"] = {"id": memory_id}
    event["path"] = event["requestContext"]["path"] = f"/v1/memories/{memory_id}/keyFacts"
    event["resource"] = event["requestContext"]["resourcePath"] = "/v1/memories/{id}/keyFacts"


# The session whose extraction fails every time (the embedding model refuses its text): retried
# after each failure, then parked in the dead-letter queue. Its own thread, so no other step
# embeds its turn.
FAILING_SESSION = "session-embedder-fails"


def _failing(event: dict[str, Any], state: dict[str, str]) -> None:
    body = json.loads(event["body"])
    body |= {"session_uuid": FAILING_SESSION, "parent_session_uuid": "thread-embedder-fails"}
    body["new_dialog"] = {"uuid": "dialog-fails", "query": EMBEDDER_FAILS, "answer": EMBEDDER_FAILS}
    event["body"] = json.dumps(body, ensure_ascii=False)


# A second session extracted with the first, whose memory is deleted through the memory bank
# (an engine memory: its turns stay, marked forgotten).
SECOND_SESSION = "session-2"


def _second(event: dict[str, Any], state: dict[str, str]) -> None:
    body = json.loads(event["body"])
    body |= {"session_uuid": SECOND_SESSION, "parent_session_uuid": "thread-2"}
    event["body"] = json.dumps(body, ensure_ascii=False)


def _with_engine_memory(event: dict[str, Any], state: dict[str, str]) -> None:
    (memory, *_) = DynamoDbStore(TABLE, REGION).list_memories(TENANT, SECOND_SESSION)
    _with_fact(event, {"fact": memory.memory_id})


# Two sessions of one thread: Mina said where she lives in March, and that she moved in May, so
# the May memory supersedes the March one's residence. An as_of question matching only the March
# memory, for one hit, leaves the May one out of the hits: retrieve reads it by id to put it
# first (the search over exact shards, and a question sharing no word with the May turn, make
# that so whatever the embedder's scores).
MOVED_THREAD = "thread-moved"
LIVED, MOVED = "session-lived-in-busan", "session-moved-to-seoul"
SAID = {
    LIVED: ("I live in Busan.", "Busan is lovely.", "2026-03-01T09:00:00Z"),
    MOVED: ("I moved to Seoul last week.", "Congratulations!", "2026-05-01T09:00:00Z"),
}


def _said_in(session: str) -> Callable[[dict[str, Any], dict[str, str]], None]:
    def edit(event: dict[str, Any], state: dict[str, str]) -> None:
        query, answer, when = SAID[session]
        body = json.loads(event["body"])
        body |= {"session_uuid": session, "parent_session_uuid": MOVED_THREAD, "user_name": "Mina"}
        body |= {"language": "en"}
        body["new_dialog"] = {"uuid": f"{session}-1", "query": query, "answer": answer, "timestamp": when}
        event["body"] = json.dumps(body, ensure_ascii=False)

    return edit


def _asked_where_she_lived(event: dict[str, Any], state: dict[str, str]) -> None:
    body = json.loads(event["body"])
    body |= {"parent_session_uuids": [MOVED_THREAD], "last_dialog_uuid": None}
    body["user_input"] = {"query": "Do I still live in Busan?"}
    body["options"] = {"limit": 1, "as_of": "2026-06-01T00:00:00Z", "explain": True}
    event["body"] = json.dumps(body, ensure_ascii=False)


def _the_move_read_by_id(answer: dict[str, Any]) -> bool:
    """The one hit is the May memory, read from the store to replace the March one the search
    found (scored as a replacement, not by the search)."""
    (moved, *_) = DynamoDbStore(TABLE, REGION).list_memories(TENANT, MOVED)
    hits = json.loads(answer["body"])["data"]
    return [(hit["memory_id"], set(hit["score_parts"])) for hit in hits] == [(moved.memory_id, {"replaces"})]


def _the_move_deleted(event: dict[str, Any], state: dict[str, str]) -> None:
    """The May memory deleted by id: the March one's residence, which it replaced, holds again
    (the thread's statements record put over, the March memory rewritten in place)."""
    (moved, *_) = DynamoDbStore(TABLE, REGION).list_memories(TENANT, MOVED)
    event["body"] = json.dumps({"session_uuid": MOVED, "dialog_uuid": moved.memory_id})


def _busan_holds_again(answer: dict[str, Any]) -> bool:
    (lived, *_) = DynamoDbStore(TABLE, REGION).list_memories(TENANT, LIVED)
    return len(json.loads(answer["body"])["data"]["deleted_memories"]) == 1 and not lived.life.key_facts


def _the_march_memory(event: dict[str, Any], state: dict[str, str]) -> None:
    """The March memory deleted through the memory bank: its statement leaves the thread's record
    (put over)."""
    (lived, *_) = DynamoDbStore(TABLE, REGION).list_memories(TENANT, LIVED)
    _with_fact(event, {"fact": lived.memory_id})


# Chats recorded into session-1 at once, enough to bring its buffer to the extraction point (the
# default threshold): the record queues the extraction, and a fork up to the last of them copies
# a full buffer, which queues the copy's own.
FULL_BUFFER = 20
LAST_CHAT = f"chat-{FULL_BUFFER - 1}"


def _fills_the_buffer(event: dict[str, Any], state: dict[str, str]) -> None:
    body = json.loads(event["body"])
    (chat, *_) = body["chats"]
    body["chats"] = [
        chat | {"uuid": f"chat-{n}", "message": f"{chat['message']} ({n})"} for n in range(FULL_BUFFER)
    ]
    event["body"] = json.dumps(body, ensure_ascii=False)


def _fork_of_the_full_buffer(event: dict[str, Any], state: dict[str, str]) -> None:
    body = json.loads(event["body"])
    body |= {"target_session_uuid": "session-1-full", "cutoff_dialog_uuid": LAST_CHAT}
    event["body"] = json.dumps(body, ensure_ascii=False)


def _with_key_fact_correction(event: dict[str, Any], state: dict[str, str]) -> None:
    """bank_patch's sample turned into PATCH /v1/memories/{id}/keyFacts/0 (the same function) on
    the extracted memory whose key facts were just read (every variant's extractor gives it one:
    the replay's LLM quotes the turns)."""
    memory_id = state.get("key_fact_memory")
    if memory_id is None:
        raise AssertionError("the extracted memory the retrieve found has no key fact to correct")
    event["pathParameters"] = {"id": memory_id, "index": "0"}
    event["path"] = event["requestContext"]["path"] = f"/v1/memories/{memory_id}/keyFacts/0"
    event["resource"] = event["requestContext"]["resourcePath"] = "/v1/memories/{id}/keyFacts/{index}"
    event["body"] = json.dumps({"fact": "Corrected by the operator."})


def _second_fact(event: dict[str, Any], state: dict[str, str]) -> None:
    """The chat user says a second fact, so forgetting them lowers their scope's count of facts
    before it deletes the count with their last fact."""
    body = json.loads(event["body"])
    body["messages"][-1]["content"] = "I live in Busan."
    event["body"] = json.dumps(body, ensure_ascii=False)


@contextmanager
def _fork_cut_short() -> Iterator[None]:
    """A fork written in chunks (of 10 actions here: 100 on AWS) whose second transaction fails
    (a throttle, the network): the fork deletes what its first one wrote (BatchWriteItem) and
    tells its caller to retry."""
    transact = DynamoTable.transact
    calls = 0

    def second_fails(table: DynamoTable, actions: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise Unavailable("DynamoDB throttled the transaction (the replay's fault)")
        transact(table, actions)

    with (
        mock.patch.object(dynamodb_fork, "TRANSACTION_LIMIT", 10),
        mock.patch.object(DynamoTable, "transact", second_fails),
    ):
        yield


def _queue(function: str = WORKER) -> Step:
    return Step(function, None)


STEPS: tuple[Step, ...] = (
    Step("authorizer", "authorizer", _with_key),
    Step("health", "health"),
    Step("consolidate", "consolidate"),
    Step("consolidate", "consolidate_force_summary"),
    Step("consolidate", "consolidate_force_summary", _second),
    Step("consolidate", "consolidate_force_summary", _failing),
    _queue(),
    Step(WORKER, "extraction_worker"),
    Step("retrieve", "retrieve"),
    Step("consolidate", "consolidate_force_summary", _said_in(LIVED)),
    Step("consolidate", "consolidate_force_summary", _said_in(MOVED)),
    _queue(),
    Step("retrieve", "retrieve", _asked_where_she_lived, settled=True, expect=_the_move_read_by_id),
    Step("delete", "delete", _the_move_deleted, expect=_busan_holds_again),
    Step("bank_delete", "bank_delete", _the_march_memory),
    Step("embed", "embed"),
    Step("game_record_memory", "game_record_memory"),
    Step("game_memory", "game_memory"),
    Step("inspect_threads", "inspect_threads"),
    Step("inspect_session", "inspect_session"),
    Step("inspect_memories", "inspect_memories"),
    Step("export", "export"),
    Step("inspect_queue", "inspect_queue"),
    Step("inspect_delete_preview", "inspect_delete_preview"),
    Step("inspect_extract", "inspect_extract"),
    _queue(),
    Step("game_record_memory", "game_record_memory", _fills_the_buffer),
    Step("fork", "fork", _fork_of_the_full_buffer, fault=_fork_cut_short),
    Step("fork", "fork", _fork_of_the_full_buffer),
    Step("fork", "fork"),
    Step("bank_create", "bank_create"),
    Step("bank_get", "bank_get", _with_fact),
    Step("bank_retrieve", "bank_retrieve"),
    Step("bank_retrieve", "bank_retrieve", settled=True),
    Step("bank_generate", "bank_generate"),
    Step("bank_patch", "bank_patch", _with_fact),
    Step("bank_get", "bank_get", _with_fact_revisions),
    Step("bank_get", "bank_get", _with_key_facts),
    Step("bank_patch", "bank_patch", _with_key_fact_correction),
    Step("bank_delete", "bank_delete", _with_fact),
    Step("chat_completions", "chat_completions"),
    Step("chat_models", "chat_models"),
    _queue(),
    Step("chat_completions", "chat_completions", _second_fact),
    _queue(),
    # The user's facts now stored and searchable: the chat reads them. Its exchange is still
    # queued when the user is forgotten, so the worker records it, then forgets it again.
    Step("chat_completions", "chat_completions", settled=True),
    Step("forget_user", "forget_user"),
    _queue(),
    Step(WORKER, "extraction_worker_chat_memory"),
    Step(WORKER, "extraction_worker_forget_user"),
    Step("delete", "delete"),
    Step("bank_delete", "bank_delete", _with_engine_memory),
    _queue(),
    Step(WORKER, "extraction_worker_sweep"),
    _queue(),
)


def _judge(step: Step, answer: Any) -> tuple[bool, str]:
    """Whether the function's answer is a success for its kind of event, and what it said."""
    shown = json.dumps(answer, ensure_ascii=False, default=str)[:600]
    if step.function == "authorizer":
        effects = [s["Effect"] for s in answer.get("policyDocument", {}).get("Statement", [])]
        return effects == ["Allow"] and answer.get("context", {}).get("tenant") == TENANT, shown
    if step.function == WORKER:
        # A record reported failed is a retry the worker scheduled (a job that failed, a purge
        # job not due yet): the queue delivers it again. Only a handler that raised is a failure;
        # a job that failed for good is checked in the dead-letter queue after the replay.
        answers = answer if isinstance(answer, list) else [answer]
        return all("error" not in a for a in answers), shown
    if step.fault is not None:
        return int(answer.get("statusCode", 0)) == 503, shown
    succeeded = 200 <= int(answer.get("statusCode", 0)) < 300
    return succeeded and (step.expect is None or step.expect(answer)), shown


def run(stack: ReplayStack) -> list[Outcome]:
    """Play every step on the stack; the outcomes in order."""
    issued = keys.create(DynamoDbKeyStore(TABLE, REGION), datetime.now(UTC), TENANT)
    state = {"key": issued.key}
    outcomes = []
    for step in STEPS:
        before = len(stack.ledger.calls)
        if step.settled:
            # One second more: the young facts' read starts at a whole second, so a fact made in
            # the same second as the cut-off would still count as young.
            stack.later += SETTLE_SECONDS + 1
        try:
            with step.fault() if step.fault else nullcontext():
                if step.event is None:
                    answer: Any = stack.drain(step.function)
                else:
                    event = copy.deepcopy(load(step.event))
                    if step.edit is not None:
                        step.edit(event, state)
                    answer = stack.invoke(step.function, event)
            succeeded, detail = _judge(step, answer)
        except Exception as error:  # the step's failure is reported with the others
            succeeded, detail = False, f"raised {error!r}"
        if step.function == "bank_create" and succeeded:
            state["fact"] = json.loads(answer["body"])["name"].rsplit("/", 1)[-1]
        if step.function == "retrieve" and step.edit is None and succeeded:
            memories = [
                hit["memory_id"] for hit in json.loads(answer["body"])["data"] if hit.get("kind") == "memory"
            ]
            state.update({"memory": memories[0]} if memories else {})
        if step.function == "bank_get" and succeeded and json.loads(answer["body"]).get("keyFacts"):
            state["key_fact_memory"] = state["memory"]
        denied = [call for call in stack.ledger.calls[before:] if not call.allowed]
        outcomes.append(Outcome(step.name, succeeded and not denied, detail, denied))
    return outcomes
