"""The structured chat-completions call. Every request is streamed and closed at its deadline, so
the server stops generating an answer nobody waits for (`streaming`), and counted, its tokens
estimated when the server reports none. Transport failures (timeouts, cut or broken streams,
connection errors, 408/409/429, 5xx) are retried here, not by the openai client (whose retries
ignore the batch's deadline), after the server's Retry-After or an exponential, jittered backoff,
and never past the batch's deadline (nor the work's own, a Lambda's time left); an answer that
does not validate gets one repair round trip with the validation errors, then a bounded number of
fresh tries, both at a temperature above the first request's (at 0 a model gives the same answer
to the same question). Until a server has answered one request in the configured structured-output
mode, an error that names the response format moves the client to the next mode
(`modes.FALLBACK`) instead of failing the batch. This module imports `openai`: only the adapter
loads it, and only when an LLM extractor is built."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from memory_engine.adapters.openai import streaming
from memory_engine.adapters.openai.errors import LlmBadOutput, LlmError, LlmUnavailable, LlmUnsupported
from memory_engine.adapters.openai.modes import FALLBACK, refuses_mode, response_format
from memory_engine.adapters.openai.retries import RETRY_STATUSES, RetryPolicy, retry_after
from memory_engine.deadline import current as current_deadline
from memory_engine.edge.logsafe import redact_foreign
from memory_engine.extraction.prompts.render import StructuredOutput

logger = logging.getLogger(__name__)

Message = dict[str, str]
# The messages of a request in a given mode (JSON mode tells the schema in the system prompt).
MessagesFor = Callable[[StructuredOutput], list[Message]]
T = TypeVar("T", bound=BaseModel)

_MAX_ERROR_LINES = 12


@dataclass
class Usage:
    """What one structured call cost, over every request it made."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    model: str = ""
    mode: str = ""  # the structured-output mode of the answer
    # Some request's tokens were estimated (the server reported none: llama-cpp-python streams
    # without usage, and a cut or failed request has none).
    estimated: bool = False


@dataclass(frozen=True)
class RepairTexts:
    """The language's words for asking the model to fix its answer; `{errors}` is filled in."""

    invalid: str
    truncated: str


@dataclass(frozen=True)
class _Answer:
    content: str
    finish_reason: str
    problem: str = ""  # why there is no usable content, when there is none


class _ModeRefused(Exception):
    """The server answered an error naming the request's response format."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def describe_errors(exc: ValidationError) -> str:
    """Validation errors as short lines for the repair prompt (locations and messages, no values)."""
    lines = [
        f"- {'.'.join(str(part) for part in error['loc']) or '(answer)'}: {error['msg']}"
        for error in exc.errors()[:_MAX_ERROR_LINES]
    ]
    if exc.error_count() > _MAX_ERROR_LINES:
        lines.append(f"- … and {exc.error_count() - _MAX_ERROR_LINES} more")
    return "\n".join(lines)


class ChatClient:
    """One model on one OpenAI-compatible endpoint, called through the official client."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | Callable[[], str] | None = None,
        structured_output: StructuredOutput = "json_schema",
        timeout_s: float = 300.0,
        max_output_tokens: int | None = 4000,
        temperature: float | None = 0.0,
        retry_temperature: float | None = 0.7,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        draw: Callable[[], float] = random.random,
        client: Any = None,
        http_client: Any = None,
    ) -> None:
        self.model = model
        self._clock = clock
        # The mode requests are sent in now: the configured one until the server refuses it.
        self.structured_output: StructuredOutput = structured_output
        self._confirmed = False  # a request in the current mode has been answered
        self._refusals: list[str] = []
        self._max_output_tokens = max_output_tokens
        self._temperature = temperature
        # Repairs and fresh tries: the same model at temperature 0 tends to repeat its answer.
        self._retry_temperature = retry_temperature if temperature is not None else None
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._timeout_s = timeout_s
        self._draw = draw
        # No retries of the client's own: they would not know the batch's deadline (a retry
        # started 601.5 s into a 600 s batch); `complete` retries instead. Local servers (vLLM,
        # Ollama, llama.cpp) take any key, but the client refuses none at all. A callable key is
        # asked before each request (a secret read on AWS, refreshed when rotated).
        self._client: Any = client or openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client,  # an httpx.Client of the caller's (the benchmark records with it)
        )

    def response_format(self, output: type[BaseModel], name: str) -> dict[str, Any]:
        """The response format requests are sent with now."""
        return response_format(self.structured_output, output, name)

    def _request(
        self, messages: Sequence[Message], response_format: dict[str, Any], temperature: float | None
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "response_format": response_format,
        }
        if self._max_output_tokens is not None:
            # `max_tokens` rather than `max_completion_tokens`: every compatible server (vLLM, Ollama,
            # llama.cpp, LiteLLM) knows the older name; OpenAI's reasoning models need
            # max_output_tokens=None here.
            request["max_tokens"] = self._max_output_tokens
        if temperature is not None:
            request["temperature"] = temperature
        return request

    def _wait(self, delay: float, deadline: float, why: str) -> None:
        if self._clock() + delay > deadline:
            raise LlmUnavailable(f"Gave up on the LLM after {self._retry.deadline_s:.0f} s ({why}).")
        self._sleep(delay)

    def complete(
        self,
        messages: Sequence[Message],
        response_format: dict[str, Any],
        usage: Usage,
        deadline: float,
        temperature: float | None = None,
    ) -> _Answer:
        """One answer. What can heal (timeouts, connection errors, 408/409/429, 5xx) is retried
        here, up to `transport_attempts` requests, after the server's Retry-After or a jittered
        backoff; no request starts once the batch's deadline has passed, nor runs past it (each
        one's timeout is the time left, when shorter). While no request in the current mode has
        been answered, an error naming the response format raises `_ModeRefused`."""
        request = self._request(messages, response_format, temperature)
        attempts = self._retry.transport_attempts
        failures = 0
        while True:
            left = deadline - self._clock()
            if left <= 0:
                raise LlmUnavailable(f"Gave up on the LLM after {self._retry.deadline_s:.0f} s.")
            seconds = min(self._timeout_s, left)
            try:
                # The request's timeout bounds each wait for a byte; `streaming.read` the whole answer.
                stream = self._client.chat.completions.create(
                    **request, stream=True, stream_options={"include_usage": True}, timeout=seconds
                )
            except openai.APIStatusError as exc:
                usage.requests += 1  # refused before any generation: no tokens to count
                if not self._confirmed and refuses_mode(exc.status_code, exc.message, exc.body):
                    raise _ModeRefused(exc.status_code, exc.message) from exc
                if not (exc.status_code in RETRY_STATUSES or exc.status_code >= 500):
                    raise LlmUnavailable(
                        f"The LLM endpoint refused the request ({exc.status_code}: "
                        f"{redact_foreign(exc.message)}); "
                        "check OPENAI_BASE_URL, OPENAI_API_KEY and MEMORY_ENGINE_LLM_MODEL."
                    ) from exc
                failures += 1
                if failures >= attempts:
                    raise self._gave_up(attempts, exc) from exc
                wait = retry_after(exc.response) or self._retry.transport_delay(failures, self._draw)
                self._wait(wait, deadline, f"{exc.status_code} from the endpoint")
                continue
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                # Sent, perhaps read by the server: its prompt counted as an estimate.
                self._count(usage, messages, streaming.Streamed(error=exc))
                failures += 1
                if failures >= attempts:
                    raise self._gave_up(attempts, exc) from exc
                self._wait(self._retry.transport_delay(failures, self._draw), deadline, type(exc).__name__)
                continue
            streamed = streaming.read(stream, min(seconds, deadline - self._clock()))
            self._count(usage, messages, streamed)
            if not streamed.whole:
                failure = streamed.error or TimeoutError(f"no whole answer within {seconds:.0f} s")
                failures += 1
                if failures >= attempts:
                    raise self._gave_up(attempts, failure) from streamed.error
                why = "the answer was cut at its deadline" if streamed.cut else type(failure).__name__
                self._wait(self._retry.transport_delay(failures, self._draw), deadline, why)
                continue
            if failures:
                logger.warning("LLM request succeeded after %d retries", failures)
            self._confirmed = True
            usage.model = streamed.model or self.model
            return self._answer(streamed)

    def _count(self, usage: Usage, messages: Sequence[Message], streamed: streaming.Streamed) -> None:
        """One request's tokens: as the server reported them, else estimated (module docstring of
        `streaming`): an abandoned or failed request costs too."""
        usage.requests += 1
        prompt, completion = streamed.prompt_tokens, streamed.completion_tokens
        if prompt is None or completion is None:
            usage.estimated = True
        usage.prompt_tokens += prompt if prompt is not None else streaming.prompt_estimate(messages)
        usage.completion_tokens += completion if completion is not None else streamed.pieces

    def _fall_back(self, refused: _ModeRefused) -> None:
        """Move to the next structured-output mode, or raise LlmUnsupported when none is left."""
        mode = self.structured_output
        self._refusals.append(f"{mode}: {refused.status} {refused.message[:200]}")
        following = FALLBACK[mode]
        if following is None:
            raise LlmUnsupported(
                f"The LLM endpoint refused every structured-output mode ({'; '.join(self._refusals)}). "
                "Check that the server and model support JSON output (docs/configuration.md lists the "
                "settings per server)."
            )
        logger.warning(
            "The LLM endpoint refused structured output %s (%s %s); using %s from now on. Set "
            "MEMORY_ENGINE_LLM_STRUCTURED_OUTPUT=%s to start there.",
            mode,
            refused.status,
            refused.message[:200],
            following,
            following,
        )
        self.structured_output = following
        self._confirmed = False

    @staticmethod
    def _gave_up(attempts: int, failure: Exception) -> LlmUnavailable:
        return LlmUnavailable(
            f"The LLM endpoint failed {attempts} times in a row ({redact_foreign(str(failure))})."
        )

    def _answer(self, streamed: streaming.Streamed) -> _Answer:
        if not streamed.choices:
            return _Answer("", "error", "the response had no choices")
        finish = streamed.finish_reason
        if not streamed.pieces:
            refusal = streamed.refusal
            return _Answer(
                "", finish, f"the model refused: {refusal}" if refusal else "the answer had no content"
            )
        return _Answer(streamed.content, finish)

    def structured(
        self, messages: MessagesFor | Sequence[Message], output: type[T], name: str, repair: RepairTexts
    ) -> tuple[T, Usage]:
        """An answer validated by `output`. `messages` may be a function of the structured-output
        mode (the client can move to another mode on the way). Raises LlmBadOutput when every round
        fails, LlmUnavailable when the endpoint does; never returns an empty or partial value.
        Either error's `spent` says what the failed call cost; `usage.mode` the mode answered in."""
        usage = Usage(model=self.model)
        messages_for = messages if callable(messages) else _fixed(messages)
        try:
            return self._structured(messages_for, output, name, repair, usage), usage
        except LlmError as error:
            error.spent = {
                "requests": usage.requests,
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "tokens_estimated": int(usage.estimated),
            }
            raise

    def _ask(
        self,
        messages_for: MessagesFor,
        extra: Sequence[Message],
        output: type[BaseModel],
        name: str,
        usage: Usage,
        deadline: float,
        temperature: float | None,
    ) -> _Answer:
        """One answer in the current mode, moving on to the next mode when the server refuses it."""
        while True:
            mode = self.structured_output
            conversation = [*messages_for(mode), *extra]
            try:
                answer = self.complete(
                    conversation, self.response_format(output, name), usage, deadline, temperature
                )
            except _ModeRefused as refused:
                self._fall_back(refused)
                continue
            usage.mode = mode
            return answer

    def _structured(
        self, messages_for: MessagesFor, output: type[T], name: str, repair: RepairTexts, usage: Usage
    ) -> T:
        invalid = 0
        cap = self._retry.content_attempts or 2 * self._retry.content_rounds
        # A batch's bound, or the work's own when that ends sooner (a Lambda's remaining time):
        # the batch fails and is retried rather than being killed mid-request.
        deadline = self._clock() + min(self._retry.deadline_s, current_deadline().remaining())
        problem = ""
        for round_number in range(1, self._retry.content_rounds + 1):
            if round_number > 1:
                self._wait(self._retry.delay(round_number - 1), deadline, problem[:200])
            extra: list[Message] = []
            for repairing in (False, True):
                first = round_number == 1 and not repairing
                temperature = self._temperature if first else self._retry_temperature
                answer = self._ask(messages_for, extra, output, name, usage, deadline, temperature)
                value, problem = self._validate(answer, output)
                if value is not None:
                    return value
                invalid += 1
                logger.warning(
                    "LLM answer invalid (round %d, %s): %s",
                    round_number,
                    "repair" if repairing else "first",
                    problem.replace("\n", " ")[:300],
                )
                if invalid >= cap:
                    break
                if not repairing:
                    template = repair.truncated if answer.finish_reason == "length" else repair.invalid
                    extra = [
                        {"role": "assistant", "content": answer.content},
                        {"role": "user", "content": template.format(errors=problem)},
                    ]
            if invalid >= cap:
                break
        raise LlmBadOutput(
            f"The model {self.model} gave no valid answer in {usage.requests} requests (last problem: "
            f"{problem[:500]}). Check that the model follows JSON output, or set "
            "MEMORY_ENGINE_LLM_STRUCTURED_OUTPUT to a mode the server enforces (docs/configuration.md)."
        )

    @staticmethod
    def _validate(answer: _Answer, output: type[T]) -> tuple[T | None, str]:
        if answer.problem:
            return None, answer.problem
        try:
            return output.model_validate_json(answer.content), ""
        except ValidationError as exc:
            if answer.finish_reason == "length":
                return None, "finish_reason=length: the answer stopped at the output token limit"
            return None, describe_errors(exc)


def _fixed(messages: Sequence[Message]) -> MessagesFor:
    listed = list(messages)
    return lambda _mode: listed
