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

EVENTS = Path(__file__).resolve().parents[2] / "events"


@dataclass(frozen=True)
class Ids:
    """The ids a probe may name: tenant A's real ones, or fresh ones that exist nowhere."""

    session: str
    thread: str
    dialog: str
    memory: str

    def values(self) -> list[str]:
        return [self.session, self.thread, self.dialog, self.memory]


# Tenant B's own session, for probes that need B to hold something (fork B's session into A's name).
B_SESSION, B_THREAD, B_DIALOG = "b-session", "b-thread", "b-dialog"


@dataclass(frozen=True)
class Probe:
    name: str
    body: Callable[[Ids], dict[str, Any]]
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
    "fork_delete": [
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
TAKES_NO_TENANT_IDS = {"embed"}
