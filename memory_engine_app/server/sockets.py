"""The local server's connections: how long a request may take to arrive, how many are served at
once, whether a client is still there, and which requests are still running at shutdown."""

from __future__ import annotations

import io
import logging
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

log = logging.getLogger("memory_engine.server")

# How often a running request may look at its client's socket (`client_watch`).
WATCH_INTERVAL_S = 0.05
# How long the accept loop waits for an evicted connection's thread to free its slot, once
# MAX_LEAVING evicted threads have not ended yet.
EVICTION_WAIT_S = 1.0
# Evicted connections whose threads may still be ending while their slots already serve
# newcomers. Waiting for each one's thread before accepting the next connection cost the accept
# loop milliseconds per eviction on a busy host, and another process reopening 500 held sockets
# makes one eviction per connection it reopens: a health check queued behind them waited 1.7 s
# (p50) to be accepted. The bound keeps the threads finite all the same.
MAX_LEAVING = 64
# Evictions are logged at most once this often, with their count: the accept loop evicts once per
# connection an attacker reopens, and a line each was hundreds a second on its critical path.
EVICTION_LOG_S = 10.0


class RequestReader(io.RawIOBase):
    """A connection's bytes for `BaseHTTPRequestHandler.rfile`: every receive waits at most
    `per_receive_s`, and a request's line, headers and body must all arrive within `whole_s` of
    its first byte. The socket's own timeout applies per receive only, so without the second
    bound a client sending one byte every few seconds would hold a thread forever."""

    def __init__(self, sock: socket.socket, per_receive_s: float | None, whole_s: float) -> None:
        self._sock = sock
        self._per_receive_s = per_receive_s
        self._whole_s = whole_s
        self._first_byte: float | None = None

    def next_request(self) -> None:
        """The next request's clock starts at its first byte (an idle keep-alive wait is bounded
        per receive only)."""
        self._first_byte = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        timeout = self._per_receive_s
        if self._first_byte is not None:
            left = self._first_byte + self._whole_s - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request did not arrive in time")
            timeout = left if timeout is None else min(timeout, left)
        self._sock.settimeout(timeout)
        received = self._sock.recv_into(buffer)
        if received and self._first_byte is None:
            self._first_byte = time.monotonic()
        return received


def client_watch(sock: socket.socket, stopping: threading.Event) -> Callable[[], bool]:
    """A request's cancellation test: True once the server is stopping or the client has closed
    its connection (a peek at the socket, at most every WATCH_INTERVAL_S). Use cases ask it
    between stages (`memory_engine.deadline`), so work nobody waits for stops there."""
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLPRI)
    gone = False
    looked = 0.0

    def cancelled() -> bool:
        nonlocal gone, looked
        if gone or stopping.is_set():
            return True
        now = time.monotonic()
        if now - looked < WATCH_INTERVAL_S:
            return False
        looked = now
        try:
            events = poller.poll(0)
            # Readable with nothing to read is the client's FIN (or an error): it has gone. Bytes
            # waiting are a pipelined next request: it is still there.
            if events:
                broken = events[0][1] & (select.POLLHUP | select.POLLERR | select.POLLNVAL)
                gone = bool(broken) or sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            gone = True
        return gone

    return cancelled


class Evicted(Exception):
    """The connection gave its slot to a newer one before its request could run."""


@dataclass
class _Connection:
    since: float  # when it last began to wait for a request: accepted, or its last answer written
    running: bool = False  # a request of it is being handled (and answered)
    evicted: bool = False
    handed_over: bool = False  # evicted, its slot given to a newcomer before its thread ended


class LocalHttpServer(ThreadingHTTPServer):
    """One thread per connection, so no request waits on another's network calls; at most
    `max_connections` of them. A connection holds its slot for good only while one of its
    requests runs: waiting for a request (idle keep-alive, never used) or still receiving one
    (a client trickling it in), it gives its slot to a newcomer when every slot is taken, the
    one waiting longest first; only when every slot runs a request is a newcomer answered 503 at
    once and closed. So sockets held open by anyone (idle or trickling, any number) cannot lock
    out the clients that send requests, and stalled clients cannot exhaust the process.
    `stopping` is set at shutdown: running requests see it as their cancellation, and
    `wait_idle` waits for them to end."""

    daemon_threads = True
    # Connections waiting to be accepted (socketserver's default is 5): a burst of clients gets
    # queued by the kernel instead of refused (the kernel caps it at net.core.somaxconn).
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], handler: Any, max_connections: int = 256) -> None:
        super().__init__(address, handler)
        self.stopping = threading.Event()
        self._slots = threading.BoundedSemaphore(max_connections)
        self._busy = 0
        self._busy_lock = threading.Condition()
        self._open: dict[socket.socket, _Connection] = {}
        self._open_lock = threading.Lock()
        self._leaving = 0  # handed-over connections whose threads have not ended
        self.evictions = 0
        self._evictions_logged = (0, -EVICTION_LOG_S)  # the count logged last, and when

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False) and not self._evict_for_newcomer():
            self._refuse(request)
            return
        with self._open_lock:
            self._open[request] = _Connection(since=time.monotonic())
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._forget(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._forget(request)

    def _forget(self, request: Any) -> None:
        with self._open_lock:
            held = self._open.pop(request, None)
            if held is not None and held.handed_over:
                self._leaving -= 1
        if held is not None and not held.handed_over:
            self._slots.release()

    def _evict_for_newcomer(self) -> bool:
        """Close the connection that has waited longest for a request, and take its slot (its
        thread sees the socket shut at once and ends). False when every connection runs one."""
        with self._open_lock:
            waiting = [
                (held.since, id(sock), sock)
                for sock, held in self._open.items()
                if not (held.running or held.evicted)
            ]
            if not waiting:
                return False
            victim = min(waiting)[2]
            held = self._open[victim]
            held.evicted = True
            # Its slot passes to the newcomer at once while few evicted threads are still ending.
            held.handed_over = self._leaving < MAX_LEAVING
            self._leaving += held.handed_over
        with suppress(OSError):
            victim.shutdown(socket.SHUT_RDWR)
        self.evictions += 1
        logged, at = self._evictions_logged
        now = time.monotonic()
        if now - at >= EVICTION_LOG_S:
            log.info("%d waiting connections gave their slots to new ones", self.evictions - logged)
            self._evictions_logged = (self.evictions, now)
        if held.handed_over:
            return True
        # Its thread frees the slot as it ends; bounded, so the accept loop never hangs on it.
        return self._slots.acquire(timeout=EVICTION_WAIT_S)

    def _refuse(self, request: socket.socket) -> None:
        body = b'{"status": "error", "message": "Too many connections: retry shortly.", "errors": []}'
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        try:
            request.settimeout(1.0)
            request.sendall(head.encode() + body)
        except OSError:
            pass
        log.warning("connection refused: %s", "all connection threads busy")
        self.shutdown_request(request)

    @contextmanager
    def busy(self, connection: socket.socket | None = None) -> Iterator[None]:
        """Around one request's handling and answer: `wait_idle` waits for it, and its connection
        keeps its slot meanwhile. Raises `Evicted` when the connection gave its slot away already."""
        if connection is not None:
            with self._open_lock:
                held = self._open.get(connection)
                if held is not None:
                    if held.evicted:
                        raise Evicted
                    held.running = True
        with self._busy_lock:
            self._busy += 1
        try:
            yield
        finally:
            with self._busy_lock:
                self._busy -= 1
                self._busy_lock.notify_all()
            if connection is not None:
                with self._open_lock:
                    held = self._open.get(connection)
                    if held is not None:
                        held.running = False
                        held.since = time.monotonic()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is being handled (idle keep-alive connections do not count)."""
        with self._busy_lock:
            return self._busy_lock.wait_for(lambda: self._busy == 0, timeout)
