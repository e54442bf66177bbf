"""Tenant B naming tenant A's session, thread, dialog or memory gets exactly the answer it would get
for ids that exist nowhere, and A's data is unchanged: ids cannot be probed across tenants.

Every authenticated route in functions/routes.py is covered through `PROBES` (or declared as
taking no tenant ids); the keys are real store keys, resolved by the dispatcher as in production.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from functions.routes import ROUTES
from tests.fakes.stack import LocalStack
from tests.security.samples import B_DIALOG, B_SESSION, B_THREAD, PROBES, TAKES_NO_TENANT_IDS, Ids, Probe

TENANT_A, TENANT_B = "tenant-a", "tenant-b"
A_SECRETS = ["under the mat", "lighthouse, part", "love lighthouses"]
A_USER = "3f2b8c1e-9d4a-4e6b-8f1c-2a7d5e9b0c13"
MISSING = Ids(
    session="nowhere-session",
    thread="nowhere-thread",
    dialog="nowhere-d0",
    memory="20260101_000000_abcdef",
    bank_memory="20260101_000000_fedcba",
    scope_value="nowhere-user",
    userid="9a1c4e7b-2d3f-4a5b-9c6d-7e8f9a0b1c2d",
)
CASES = [
    pytest.param(route, probe, id=f"{route.method} {route.path}: {probe}")
    for route in ROUTES
    if route.auth
    for probe in PROBES.get(route.function, [])
]
# Generated at run time: memory ids and times of what B creates differ between any two requests.
VOLATILE = [
    (re.compile(r"\d{8}_\d{6}_[0-9a-f]{6}"), "<new-id>"),
    (re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z?"), "<time>"),
]


def consolidate(stack: LocalStack, key: str, session: str, thread: str, dialog: str, text: str) -> None:
    body = {
        "session_uuid": session,
        "parent_session_uuid": thread,
        "new_dialog": {"uuid": dialog, "query": text, "answer": "noted"},
        "user_name": "Ada",
        "language": "en",
    }
    assert stack.call("POST", "/v1/engine/consolidate/", body, key=key)[0] == 200


@pytest.fixture
def seeded(stack: LocalStack) -> tuple[LocalStack, Ids]:
    """A holds a session of 20 turns (two memories, four turns buffered), a memory-bank fact and a
    chat user with remembered facts; B holds one turn of its own."""
    key_a = stack.key_for(TENANT_A)
    for n in range(20):
        consolidate(
            stack, key_a, "a-session", "a-thread", f"a-d{n}", f"secret plans for the lighthouse, part {n}"
        )
    fact = {"fact": "Ada's lighthouse key is under the mat.", "scope": {"user_id": "a-user"}}
    status, _, created = stack.call("POST", "/v1/memories", fact, key=key_a)
    assert status == 200
    chat = {
        "model": "test-model",
        "userid": A_USER,
        "messages": [{"role": "user", "content": "I love lighthouses."}],
    }
    assert stack.call("POST", "/v1/chat/completions", chat, key=key_a)[0] == 200
    stack.drain()
    memories = stack.engine.store.list_memories(TENANT_A, "a-session")
    assert len(memories) == 2
    consolidate(stack, stack.key_for(TENANT_B), B_SESSION, B_THREAD, B_DIALOG, "B's own small talk")
    ids = Ids(
        session="a-session",
        thread="a-thread",
        dialog="a-d0",
        memory=memories[0].memory_id,
        bank_memory=created["name"].removeprefix("memories/"),
        scope_value="a-user",
        userid=A_USER,
    )
    assert snapshot(stack, ids)[-1][2]["retrieved_memories"], "A's chat user has facts to protect"
    return stack, ids


def snapshot(stack: LocalStack, ids: Ids) -> Any:
    store, key = stack.engine.store, stack.key_for(TENANT_A)
    search = {
        "parent_session_uuids": [ids.thread],
        "user_input": {"query": "lighthouse"},
        "options": {"limit": 50},
    }
    return (
        store.get_session(TENANT_A, ids.session),
        store.list_turns(TENANT_A, ids.session),
        store.list_memories(TENANT_A, ids.session),
        store.get_characters(TENANT_A, ids.thread),
        stack.call("POST", "/v1/engine/retrieve/", search, key=key),
        stack.call("GET", f"/v1/memories/{ids.bank_memory}", key=key),
        stack.call(
            "POST",
            "/v1/memories/retrieve",
            {"scope": {"user_id": ids.scope_value}, "simple_retrieval_params": {}},
            key=key,
        ),
        stack.call(
            "POST",
            "/v1/memories/retrieve",
            {"scope": {"userid": ids.userid}, "simple_retrieval_params": {}},
            key=key,
        ),
    )


def send_as_b(stack: LocalStack, route: Any, probe: Probe, ids: Ids) -> tuple[int, str, str]:
    """B's answer and what B's request sent to the chat model, ids and volatile values masked."""
    chat = stack.engine.chat
    sent_before = len(chat.bodies)  # type: ignore[attr-defined]
    path = probe.path(ids) if probe.path else route.path
    status, _, body = stack.call(route.method, path, probe.body(ids), key=stack.key_for(TENANT_B))
    upstream = chat.bodies[sent_before:]  # type: ignore[attr-defined]
    texts = [json.dumps(part, sort_keys=True, ensure_ascii=False) for part in (body, upstream)]
    # Ids are echoed in messages ("No session 'x'"): compare the answers with ids as placeholders.
    for name, value in ids.named().items():
        texts = [text.replace(value, f"<{name}>") for text in texts]
    for pattern, placeholder in VOLATILE:
        texts = [pattern.sub(placeholder, text) for text in texts]
    return status, texts[0], texts[1]


def test_every_authenticated_route_is_probed_for_foreign_ids() -> None:
    unprobed = [
        r.function
        for r in ROUTES
        if r.auth and r.function not in PROBES and r.function not in TAKES_NO_TENANT_IDS
    ]

    assert unprobed == [], f"add probes for {unprobed} to tests/security/samples.py"


@pytest.mark.parametrize(("route", "probe"), CASES)
def test_a_foreign_id_answers_exactly_as_a_missing_one(
    seeded: tuple[LocalStack, Ids], route: Any, probe: Probe
) -> None:
    stack, a_ids = seeded

    foreign = send_as_b(stack, route, probe, a_ids)
    missing = send_as_b(stack, route, probe, MISSING)

    assert foreign == missing
    seen_by_b = foreign[1] + foreign[2]
    assert not [secret for secret in A_SECRETS if secret in seen_by_b]


@pytest.mark.parametrize(("route", "probe"), CASES)
def test_a_foreign_request_leaves_the_owners_data_unchanged(
    seeded: tuple[LocalStack, Ids], route: Any, probe: Probe
) -> None:
    stack, a_ids = seeded
    before = snapshot(stack, a_ids)

    send_as_b(stack, route, probe, a_ids)
    stack.drain()

    assert snapshot(stack, a_ids) == before


def test_concurrent_requests_of_two_tenants_never_cross(stack: LocalStack) -> None:
    """The local server dispatches requests from many threads; each keeps its own body and tenant."""
    keys = {tenant: stack.key_for(tenant) for tenant in (TENANT_A, TENANT_B)}

    def write(tenant: str, writer: int) -> list[int]:
        statuses = []
        for n in range(40):
            body = {
                "session_uuid": "same-name",
                "parent_session_uuid": "same-thread",
                "new_dialog": {"uuid": f"{writer}-{n}", "query": f"written by {tenant}"},
            }
            statuses.append(stack.call("POST", "/v1/engine/consolidate/", body, key=keys[tenant])[0])
        return statuses

    with ThreadPoolExecutor(8) as pool:
        runs = [pool.submit(write, tenant, writer) for writer in range(4) for tenant in (TENANT_A, TENANT_B)]
        statuses = [status for run in runs for status in run.result()]

    assert set(statuses) == {200}
    for tenant in (TENANT_A, TENANT_B):
        turns = stack.engine.store.list_turns(tenant, "same-name")
        assert len(turns) == 160 and {turn.query for turn in turns} == {f"written by {tenant}"}
