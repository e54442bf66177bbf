"""The local server's HTTP side: reading a request off its connection within bounds, refusing
what it will not read, and writing the dispatcher's answer (whole or streamed in chunks)."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

from memory_engine.edge.logsafe import error_details, redact
from memory_engine_app.server.dispatch import Body, Dispatcher
from memory_engine_app.server.sockets import Evicted, LocalHttpServer, RequestReader, client_watch

log = logging.getLogger("memory_engine.server")
MAX_BODY_BYTES = 6 * 1024 * 1024  # Lambda's synchronous payload limit
DEFAULT_READ_TIMEOUT_S = 30.0
DEFAULT_REQUEST_READ_S = 60.0


def _refuse_framing(content_lengths: list[str], transfer_encoding: str | None) -> tuple[int, str] | None:
    """The status and message for a body this server will not read (too big, unframed, chunked,
    framed twice); else None."""
    if transfer_encoding:
        return 411, "Chunked bodies are not accepted: send a Content-Length."
    if len(content_lengths) > 1:
        # Two lengths are a request-smuggling vector: whichever one a proxy believed, refuse both.
        return 400, "Send one Content-Length header, not several."
    if not content_lengths or content_lengths[0].strip() == "":
        return None
    if not content_lengths[0].strip().isdigit():
        return 400, "Content-Length must be a non-negative whole number of bytes."
    if int(content_lengths[0]) > MAX_BODY_BYTES:
        return 413, f"Body over {MAX_BODY_BYTES} bytes: send less per request."
    return None


def _path_of(request_line: str) -> str:
    """The path of a request line, as far as it can be read ("" when it cannot)."""
    parts = request_line.split()
    return parts[1].partition("?")[0] if len(parts) >= 2 else ""


def make_http_handler(
    dispatcher: Dispatcher,
    read_timeout_s: float | None = DEFAULT_READ_TIMEOUT_S,
    request_read_s: float = DEFAULT_REQUEST_READ_S,
) -> type[BaseHTTPRequestHandler]:
    """The request handler class; `read_timeout_s` bounds every wait on the client's socket (a
    request line, headers or body that does not come, an idle keep-alive connection, a client
    that stops reading a stream), `request_read_s` the whole arrival of one request from its
    first byte: such a connection is closed and its thread freed. The server's own refusals
    (malformed request line, 414/431, unsupported methods, framing) answer in the JSON envelope
    of the path's route, never as an HTML page."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "memory-engine"
        timeout = read_timeout_s  # StreamRequestHandler sets it on the socket
        # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every keep-alive response.
        disable_nagle_algorithm = True
        server: LocalHttpServer

        def setup(self) -> None:
            super().setup()
            self._reader = RequestReader(self.connection, read_timeout_s, request_read_s)
            self.rfile = io.BufferedReader(self._reader)

        def handle_one_request(self) -> None:
            self._reader.next_request()
            super().handle_one_request()

        def _serve(self) -> None:
            path, _, query = self.path.partition("?")
            framing = (self.headers.get_all("Content-Length") or [], self.headers.get("Transfer-Encoding"))
            refused = _refuse_framing(*framing)
            if refused is not None:
                # The body was not read: the connection cannot carry another request.
                self._send(*dispatcher.error(path, *refused))
                self.close_connection = True
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = self.rfile.read(length) if length else b""
            except TimeoutError:
                self._send(*dispatcher.error(path, 408, "The request did not arrive in time: send it whole."))
                self.close_connection = True
                return
            if len(body) < length:  # the client closed before sending it all
                self.close_connection = True
                return
            self.connection.settimeout(read_timeout_s)  # the answer's writes: per write, not the read's rest
            watch = client_watch(self.connection, self.server.stopping)
            try:
                # The connection keeps its slot until the answer is written (never evicted mid-way).
                with self.server.busy(self.connection):
                    self._answer(path, query, body, watch)
            except Evicted:  # a newcomer took its slot while this request was still arriving
                self.close_connection = True

        def _answer(self, path: str, query: str, body: bytes, watch: Callable[[], bool]) -> None:
            headers = {name: value for name, value in self.headers.items()}
            try:
                answer = dispatcher.dispatch(self.command, path, query, headers, body, watch)
            except Exception as error:
                log.error("request failed", extra=error_details(error))
                answer = dispatcher.error(path, 500, "Internal error; the request may be retried.")
            if watch():
                self.close_connection = True  # nobody to answer (or the server is stopping)
                if not self.server.stopping.is_set():
                    return
            self._send(*answer)

        def _unsupported(self) -> None:
            path = self.path.partition("?")[0]
            message = f"{self.command} is not supported: this API answers GET, POST and DELETE."
            self._send(*dispatcher.error(path, 501, message, [("Allow", "GET, POST, DELETE")]))
            self.close_connection = True

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """http.server's own refusals (a malformed request line, a line or headers too long, an
            unknown method) in the JSON envelope of the path's route instead of its HTML page."""
            self.log_error("code %d, message %s", code, message)
            text = f"{message or HTTPStatus(code).phrase}: fix the request and send it again."
            self.close_connection = True
            # A request line too broken to name its version would get no status line (HTTP/0.9).
            self.request_version = self.protocol_version
            self._send(*dispatcher.error(_path_of(self.requestline), code, text, [("Connection", "close")]))

        def _send(self, status: int, headers: list[tuple[str, str]], body: Body) -> None:
            self.send_response(status)
            for name, value in headers:
                if name.lower() not in {"content-length", "transfer-encoding"}:
                    self.send_header(name, value)
            if isinstance(body, bytes):
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._stream(body)

        def _stream(self, chunks: Iterator[bytes]) -> None:
            """HTTP/1.1 chunked transfer, one chunk per event, flushed as it comes."""
            try:
                for chunk in chunks:
                    if chunk:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                # The client left, or stopped reading; the generator is closed below.
                self.close_connection = True
            finally:
                close = getattr(chunks, "close", None)
                if callable(close):
                    close()

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve
        do_HEAD = do_OPTIONS = _unsupported

        def log_message(self, format: str, *args: Any) -> None:
            # The request line carries the query string, where a client may have put its key.
            log.info("%s - %s", self.address_string(), redact(format % args))

    return Handler
