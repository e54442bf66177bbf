"""One chat completion, read as a stream and cut off at its deadline.

Why a stream: a server keeps generating a non-streamed answer after its client has given up
(llama-cpp-python generated 427 s and 804 s of answers nobody waited for, and the retry queued
behind them: issue 42), while a streaming server notices the closed connection at its next token
and stops (llama-cpp-python, vLLM, Ollama, OpenAI). A watchdog closes the connection at the
request's deadline even while the server sends nothing but keep-alive pings (a CPU model reading a
long prompt): a socket timeout alone would never fire between pings, nor bound the whole answer.

What a request cost is counted whatever its end: the server's usage when it reports one
(`stream_options.include_usage`, which OpenAI, vLLM and Ollama honour), else an estimate: the
prompt by `retrieval.tokens.count_tokens`, the answer one token per content chunk received (the
servers stream about one token per chunk), flagged `estimated`.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from memory_engine.retrieval.tokens import count_tokens


@dataclass
class Streamed:
    """What one streamed request brought back (so far, when it was cut)."""

    content: str = ""
    finish_reason: str = ""
    model: str = ""
    refusal: str | None = None
    choices: int = 0  # chunks that carried a choice (0: the answer had no choice at all)
    pieces: int = 0  # content deltas: about one token each
    prompt_tokens: int | None = None  # as the server reported them
    completion_tokens: int | None = None
    cut: bool = False  # the deadline came first: the connection was closed
    error: Exception | None = None  # what broke the stream, when something did

    @property
    def whole(self) -> bool:
        return not self.cut and self.error is None


def prompt_estimate(messages: Sequence[dict[str, str]]) -> int:
    """Estimated prompt tokens of `messages`: their text, plus a few for each message's frame."""
    return sum(count_tokens(message.get("content") or "") + 4 for message in messages)


def read(stream: Any, seconds: float, cut: Callable[[Any], None] | None = None) -> Streamed:
    """Read the openai `Stream` `stream` into a `Streamed`, closing its connection once `seconds`
    have passed (`cut`); what came before a cut or an error is kept (`error` says what broke it).
    A server that answered with one JSON body instead of a stream (it ignored `stream: true`) is
    read as that body."""
    answer = Streamed()
    fired = threading.Event()
    closer = cut or close_connection

    def expire() -> None:
        fired.set()
        closer(stream)

    watchdog = threading.Timer(max(0.0, seconds), expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        response: Any = getattr(stream, "response", None)
        kind = response.headers.get("content-type", "") if response is not None else ""
        if kind.startswith("application/json"):
            response.read()
            _add_completion(answer, response.json())
        else:
            _add_chunks(answer, stream)
            if not answer.finish_reason:  # the connection closed mid-answer: no [DONE], no reason
                answer.error = ConnectionError("the stream ended before the answer did")
    except (openai.APIError, OSError) as error:  # a cut connection, a lost one, an error event
        answer.error = error
    finally:
        watchdog.cancel()
        stream.close()
    # A cut as the last chunk arrived counts as one: the answer may be whole, or not.
    answer.cut = fired.is_set()
    return answer


def close_connection(stream: Any) -> None:
    """Shut the stream's socket down from another thread: a read blocked on it returns at once
    (closing the response alone waits for the next chunk), and the server sees its client gone."""
    response = getattr(stream, "response", None)
    network = (getattr(response, "extensions", None) or {}).get("network_stream")
    sock = network.get_extra_info("socket") if network is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):  # already closed: nothing is read from it any more
            sock.shutdown(socket.SHUT_RDWR)


def _add_chunks(answer: Streamed, chunks: Iterable[Any]) -> None:
    for chunk in chunks:
        answer.model = getattr(chunk, "model", None) or answer.model
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            answer.prompt_tokens = usage.prompt_tokens
            answer.completion_tokens = usage.completion_tokens
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue
            answer.choices += 1
            delta = choice.delta
            if delta is not None and delta.content:
                answer.content += delta.content
                answer.pieces += 1
            refusal = getattr(delta, "refusal", None) if delta is not None else None
            if refusal:
                answer.refusal = (answer.refusal or "") + refusal
            if choice.finish_reason:
                answer.finish_reason = choice.finish_reason


def _add_completion(answer: Streamed, body: Any) -> None:
    """A whole `chat.completion` object (as a dict), from a server that did not stream."""
    if not isinstance(body, dict):
        return
    answer.model = str(body.get("model") or "")
    usage = body.get("usage")
    if isinstance(usage, dict):
        answer.prompt_tokens = usage.get("prompt_tokens")
        answer.completion_tokens = usage.get("completion_tokens")
    choices = body.get("choices") or []
    if not choices:
        return
    answer.choices = 1
    choice = choices[0]
    message = choice.get("message") or {}
    content = message.get("content")
    if content is not None:
        answer.content = str(content)
        answer.pieces = 1
    answer.refusal = message.get("refusal")
    answer.finish_reason = str(choice.get("finish_reason") or "")
