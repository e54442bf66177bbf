"""The local server's slots when a waiting connection is evicted for a newcomer (issue 42 §2): its
slot passes to the newcomer at once, without the accept loop waiting for the evicted thread to
end (a host under load took milliseconds each, and 500 held sockets make one eviction per
reopened socket), while the evicted threads still ending stay bounded."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from memory_engine_app.server import sockets
from memory_engine_app.server.sockets import LocalHttpServer


@pytest.fixture
def server() -> Iterator[LocalHttpServer]:
    made = LocalHttpServer(("127.0.0.1", 0), BaseHTTPRequestHandler, max_connections=1)
    yield made
    made.server_close()


def _waiting(server: LocalHttpServer) -> socket.socket:
    """A connection holding a slot while it waits for a request (its thread never ends here)."""
    ours, _theirs = socket.socketpair()
    assert server._slots.acquire(blocking=False)
    server._open[ours] = sockets._Connection(since=0.0)
    return ours


def test_an_evicted_connections_slot_passes_to_the_newcomer_before_its_thread_ends(
    server: LocalHttpServer,
) -> None:
    # Given every slot held by a connection waiting for a request, whose thread has not ended
    held = _waiting(server)
    # When a newcomer evicts it
    # Then the slot is the newcomer's at once, and the evicted thread's end frees no second one
    assert server._evict_for_newcomer() is True
    server._forget(held)
    assert server._slots.acquire(blocking=False) is False


def test_past_the_bound_of_threads_still_ending_an_eviction_waits_for_one(
    server: LocalHttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no room for one more evicted thread still ending, and a wait that ends at once
    monkeypatch.setattr(sockets, "MAX_LEAVING", 0)
    monkeypatch.setattr(sockets, "EVICTION_WAIT_S", 0.0)
    held = _waiting(server)
    # When a newcomer evicts the waiting connection, whose thread has not ended
    # Then the newcomer gets no slot (it is refused), and the slot frees when the thread ends
    assert server._evict_for_newcomer() is False
    server._forget(held)
    assert server._slots.acquire(blocking=False) is True
