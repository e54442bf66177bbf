"""Requests per route for the security matrices, keyed by the route's function (routes.py).

`sample_request` reads the route's own event in events/, so a new route brings its sample with it.
`PROBES` names, for every authenticated route, the requests that refer to a tenant's data (its
sessions, threads, dialogs, memories, scopes, users); a route that refers to none is listed in
`TAKES_NO_TENANT_IDS` instead. A route in neither fails `test_every_authenticated_route_is_probed`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from memory_engine.models.domain import scope_key

EVENTS = Path(__file__).resolve().parents[2] / "events"


@dataclass(frozen=True)
class Ids:
    """The ids a probe may name: tenant A's real ones, or fresh ones that exist nowhere."""

    session: str  # an engine session (also a game session)
    thread: str
    dialog: str
    memory: str  # a memory extracted from the session
    bank_memory: str  # a memory-bank fact in scope {"user_id": scope_value}
    scope_value: str
    userid: str  # a chat user (UUID v4) with remembered facts

    def named(self) -> dict[str, str]:
        """Field name → id, longest id first (so no id is replaced inside a longer one)."""
        pairs = {name: value for name, value in vars(self).items() if value}
        return dict(sorted(pairs.items(), key=lambda pair: -len(pair[1])))


# Tenant B's own session, for probes that need B to hold something (fork B's session into A's name).
B_SESSION, B_THREAD, B_DIALOG = "b-session", "b-thread", "b-dialog"


@dataclass(frozen=True)
class Probe:
    name: str
    body: Callable[[Ids], dict[str, Any] | None]
    path: Callable[[Ids], str] | None = None  # routes with path parameters build their path

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class SampleRequest:
    method: str
    path: str
    body: Any


def sample_request(function: str) -> SampleRequest:
    event = json.loads((EVENTS / f"{function}.json").read_text())
    body = json.loads(event["body"]) if event.get("body") else None
    return SampleRequest(event["httpMethod"], event["path"], body)


PROBES: dict[str, list[Probe]] = {
    "consolidate": [
        Probe(
            "append to A's session",
            lambda ids: {
                "session_uuid": ids.session,
                "parent_session_uuid": ids.thread,
                "new_dialog": {"uuid": ids.dialog, "query": "B writes here", "answer": "ok"},
            },
        ),
    ],
    "retrieve": [
        Probe(
            "search A's thread",
            lambda ids: {
                "parent_session_uuids": [ids.thread],
                "last_dialog_uuid": ids.dialog,
                "recent_dialogs": [ids.memory],
                "user_input": {"query": "secret plans lighthouse"},
                "options": {"limit": 50},
            },
        ),
    ],
    "delete": [
        Probe("delete A's dialog", lambda ids: {"session_uuid": ids.session, "dialog_uuid": ids.dialog}),
        Probe("delete A's memory", lambda ids: {"session_uuid": ids.session, "dialog_uuid": ids.memory}),
        Probe(
            "delete A's memory from B's session",
            lambda ids: {"session_uuid": B_SESSION, "dialog_uuid": ids.memory},
        ),
    ],
    "fork": [
        Probe(
            "fork A's session",
            lambda ids: {
                "source_session_uuid": ids.session,
                "target_session_uuid": "b-fork",
                "cutoff_dialog_uuid": ids.dialog,
            },
        ),
        Probe(
            "fork B's session into A's session name",
            lambda ids: {
                "source_session_uuid": B_SESSION,
                "target_session_uuid": ids.session,
                "cutoff_dialog_uuid": B_DIALOG,
                "target_parent_session_uuid": ids.thread,
            },
        ),
    ],
}


def _scope(ids: Ids) -> dict[str, str]:
    return {"user_id": ids.scope_value}


def _no_body(ids: Ids) -> None:
    return None


_EVENTS = {"events": [{"content": {"role": "user", "parts": [{"text": "I keep bees on the roof."}]}}]}

PROBES |= {
    "game_memory": [Probe("read A's session", lambda ids: {"session_id": ids.session})],
    "game_record_memory": [
        Probe(
            "record into A's session",
            lambda ids: {
                "session_id": ids.session,
                "chats": [{"npc_id": "npc", "message": "B", "reply": "ok"}],
            },
        )
    ],
    "bank_create": [Probe("create in A's scope", lambda ids: {"fact": "B's fact", "scope": _scope(ids)})],
    "bank_get": [
        Probe("get A's fact", _no_body, lambda ids: f"/v1/memories/{ids.bank_memory}"),
        Probe("get A's extracted memory", _no_body, lambda ids: f"/v1/memories/{ids.memory}"),
        Probe("read A's fact's revisions", _no_body, lambda ids: f"/v1/memories/{ids.bank_memory}/revisions"),
        Probe("read A's memory's key facts", _no_body, lambda ids: f"/v1/memories/{ids.memory}/keyFacts"),
    ],
    "bank_patch": [
        Probe(
            "correct A's fact",
            lambda ids: {"fact": "B's words"},
            lambda ids: f"/v1/memories/{ids.bank_memory}",
        ),
        Probe("retire A's fact", lambda ids: {"retire": True}, lambda ids: f"/v1/memories/{ids.bank_memory}"),
        Probe(
            "correct A's memory's key fact",
            lambda ids: {"fact": "B's words"},
            lambda ids: f"/v1/memories/{ids.memory}/keyFacts/0",
        ),
        Probe(
            "retire A's memory's key fact",
            lambda ids: {"retire": True},
            lambda ids: f"/v1/memories/{ids.memory}/keyFacts/0",
        ),
    ],
    "bank_delete": [
        Probe("delete A's fact", _no_body, lambda ids: f"/v1/memories/{ids.bank_memory}"),
        Probe("delete A's extracted memory", _no_body, lambda ids: f"/v1/memories/{ids.memory}"),
    ],
    "bank_retrieve": [
        Probe(
            "search A's scope",
            lambda ids: {"scope": _scope(ids), "similarity_search_params": {"search_query": "lighthouse"}},
        ),
        Probe("list A's scope", lambda ids: {"scope": _scope(ids), "simple_retrieval_params": {}}),
        Probe(
            "list A's thread",
            lambda ids: {"scope": {"parent_session_uuid": ids.thread}, "simple_retrieval_params": {}},
        ),
        Probe(
            "list A's chat user", lambda ids: {"scope": {"userid": ids.userid}, "simple_retrieval_params": {}}
        ),
    ],
    "bank_generate": [
        Probe(
            "generate into A's scope", lambda ids: {"scope": _scope(ids), "direct_contents_source": _EVENTS}
        )
    ],
    "chat_completions": [
        Probe(
            "chat as A's user",
            lambda ids: {
                "model": "test-model",
                "userid": ids.userid,
                "messages": [{"role": "user", "content": "What do I love about lighthouses?"}],
            },
        )
    ],
    "forget_user": [Probe("forget A's user", _no_body, lambda ids: f"/v1/users/{ids.userid}/memory")],
}


def _inspect(path: str, **ids: str) -> str:
    return f"/v1/inspect/{path}?{urlencode(ids)}"


# The memory inspector: the lists (threads, queue) name no ids but must show B nothing of A's.
PROBES |= {
    "inspect_threads": [Probe("list the threads", _no_body)],
    "inspect_session": [
        Probe("read A's session", _no_body, lambda ids: _inspect("session", session_uuid=ids.session))
    ],
    "inspect_memories": [
        Probe("list A's thread", _no_body, lambda ids: _inspect("memories", thread=ids.thread)),
        Probe(
            "list A's scope",
            _no_body,
            lambda ids: _inspect("memories", thread=scope_key(_scope(ids))),
        ),
        Probe(
            "list A's chat user",
            _no_body,
            lambda ids: _inspect("memories", thread=scope_key({"userid": ids.userid})),
        ),
    ],
    "inspect_queue": [Probe("list the queue", _no_body)],
    "inspect_delete_preview": [
        Probe(
            "preview deleting A's dialog",
            _no_body,
            lambda ids: _inspect("delete-preview", session_uuid=ids.session, dialog_uuid=ids.dialog),
        ),
        Probe(
            "preview deleting A's memory",
            _no_body,
            lambda ids: _inspect("delete-preview", session_uuid=ids.session, dialog_uuid=ids.memory),
        ),
    ],
    "inspect_extract": [Probe("force extraction of A's session", lambda ids: {"session_uuid": ids.session})],
}
PROBES["export"] = [
    Probe("export A's thread", _no_body, lambda ids: "/v1/export?" + urlencode({"thread": ids.thread})),
    Probe(
        "export A's scope",
        _no_body,
        lambda ids: "/v1/export?" + urlencode({"scope": json.dumps(_scope(ids))}),
    ),
    Probe(
        "export A's chat user",
        _no_body,
        lambda ids: "/v1/export?" + urlencode({"scope": json.dumps({"userid": ids.userid})}),
    ),
]
TAKES_NO_TENANT_IDS = {"embed", "chat_models"}
