"""LLM extraction through a real model: validity, bounds, language, grounding, characters, tokens
and seconds per batch, on the project's own conversations (bench/data/llm_extraction/, Korean and
English, characters labelled) and a fixed sample of LoCoMo dev batches.

    make llm-local &    # Qwen2.5-Coder-1.5B on llama-cpp-python, port 8151
    MEMORY_ENGINE_EXTRACTOR=llm MEMORY_ENGINE_LLM_MODEL=qwen2.5-coder-1.5b \\
    OPENAI_BASE_URL=http://127.0.0.1:8151/v1 OPENAI_API_KEY=any \\
        .venv/bin/python -m bench.quality.llm_extraction [--record tests/llm/recorded] [--only ko-pets,locomo]

The extractor is built by `llm_extractor` from the same settings the engine reads,
so the run takes exactly the path a user's Ollama, vLLM or llama.cpp server takes. Each batch
gets the characters of the conversation's earlier batches as known characters, as a thread's
registry gives them. Every response the server sends is recorded on the way (an httpx hook):
`--record DIR` writes the raw answers to the own conversations' batches as test fixtures
(tests/llm/recorded/); LoCoMo's go to the ignored bench/.cache only (CC BY-NC: never committed).
Saves bench/results/llm_extraction.json (or --out) after every batch; `--report` prints the docs'
table of the saved run. The batches: bench/quality/llm_batches.py; the rows: bench/quality/llm_rows.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS, ROOT, locomo_path, save
from bench.quality.llm_batches import LOCOMO_SAMPLE, Batch, in_run_order, locomo_batches, own_batches
from bench.quality.llm_rows import print_rows, report, row_of, totals
from memory_engine.extraction.registry import update_registry
from memory_engine.ports import ExtractionContext

CACHE = ROOT / "bench" / ".cache" / "llm_extraction"


class Recorder:
    """Every chat-completions exchange, through an httpx response hook. A streamed answer is
    recorded as the chat completion its chunks make (`assemble`) once its stream closes, without
    holding it up: the client reads it chunk by chunk and may cut it at its deadline."""

    def __init__(self) -> None:
        self.exchanges: list[dict[str, Any]] = []

    def hook(self, response: Any) -> None:
        if not response.request.url.path.endswith("/chat/completions"):
            return
        request = json.loads(response.request.content or b"{}")
        exchange: dict[str, Any] = {
            "mode": _mode(request.get("response_format")),
            "messages": len(request.get("messages", [])),
            "temperature": request.get("temperature"),
            "max_tokens": request.get("max_tokens"),
            "status": response.status_code,
            "body": None,
        }
        self.exchanges.append(exchange)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            response.stream = _tee(response.stream, lambda raw: exchange.update(body=assemble(raw)))
            return
        response.read()
        try:
            exchange["body"] = response.json()
        except ValueError:
            exchange["body"] = response.text

    def client(self) -> Any:
        """The openai package's own HTTP client class (httpx's, whatever its version) with the hook."""
        import openai

        return openai.DefaultHttpxClient(event_hooks={"response": [self.hook]})


def _tee(stream: Any, done: Callable[[bytes], None]) -> Any:
    """`stream` (an httpx byte stream) passing its bytes on as they come, and handing them all to
    `done` once it ends or is closed (cut at a deadline included)."""
    base = next(kind for kind in type(stream).__mro__ if kind.__name__ == "SyncByteStream")

    class Tee(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            self.parts: list[bytes] = []
            self.finished = False

        def __iter__(self) -> Any:
            try:
                for part in stream:
                    self.parts.append(part)
                    yield part
            finally:
                self.finish()

        def close(self) -> None:
            self.finish()
            stream.close()

        def finish(self) -> None:
            if not self.finished:
                self.finished = True
                done(b"".join(self.parts))

    return Tee()


def assemble(raw: bytes) -> dict[str, Any]:
    """The chat completion a stream's server-sent events make: the content joined, the finish
    reason, the model and the usage when the server reported one. A stream that ended without a
    finish reason (cut at its deadline, or broken off) is marked `cut`: no answer of the model."""
    content, finish, model, usage = "", None, "", None
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        try:
            chunk = json.loads(line[5:])
        except ValueError:
            continue
        model = chunk.get("model") or model
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            content += (choice.get("delta") or {}).get("content") or ""
            finish = choice.get("finish_reason") or finish
    body: dict[str, Any] = {
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
        ],
        "usage": usage,
        "streamed": True,
    }
    if finish is None:
        body["cut"] = True
    return body


def _mode(response_format: Any) -> str:
    if not isinstance(response_format, dict):
        return "text"
    kind = str(response_format.get("type"))
    return "json_object_schema" if kind == "json_object" and "schema" in response_format else kind


def measure(
    batch: Batch, extract: Callable[[Batch, ExtractionContext], Any], known: dict[str, list[str]]
) -> dict[str, Any]:
    """One batch through `extract`: the row of the results table (`exchanges` kept for recording)."""
    context = ExtractionContext(user_name=batch.user_name, language=batch.language, known_characters=known)
    started = time.monotonic()
    extraction, error = None, None
    try:
        extraction = extract(batch, context)
    except Exception as failure:  # the benchmark reports a given-up batch, and goes on
        error = failure
    seconds = time.monotonic() - started
    return {"batch": batch, "context": context, "extraction": extraction, "error": error, "seconds": seconds}


def record(
    directory: Path,
    batch: Batch,
    context: ExtractionContext,
    exchanges: Sequence[dict[str, Any]],
    seconds: float | None = None,
) -> Path:
    """The batch, the server's raw responses and the batch's seconds: a test fixture for the own
    conversations (tests/llm/recorded/), a rescoring copy for LoCoMo's (the ignored cache)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{batch.id.replace('#', '-')}.json"
    fixture = {
        "batch": batch.id,
        "language": batch.language,
        "user_name": batch.user_name,
        "known_characters": dict(context.known_characters),
        "turns": [
            {
                "query": t.query,
                "answer": t.answer,
                "user_name": t.user_name,
                "timestamp": t.timestamp.isoformat(),
            }
            for t in batch.turns
        ],
        "seconds": None if seconds is None else round(seconds, 1),
        "exchanges": list(exchanges),
    }
    path.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path


def _save(
    settings: Any, data: Path | None, args: argparse.Namespace, rows: Sequence[dict[str, Any]], quiet: bool
) -> None:
    from memory_engine.composition.providers.llm import LlmExtractorSettings

    own = LlmExtractorSettings()
    payload = {
        "model": settings.llm_model,
        "structured_output": own.llm_structured_output,
        "max_output_tokens": own.llm_max_output_tokens,
        "timeout_seconds": own.llm_timeout_seconds,
        "batch_seconds": settings.llm_batch_seconds,
        # The server's decoding threads, as `make llm-local` was given them (LLM_THREADS), when said.
        "server_threads": os.environ.get("LLM_THREADS"),
        "past_deadline": sum(1 for row in rows if row["seconds"] > settings.llm_batch_seconds),
        "locomo": data.name if data else None,
        "locomo_sample": [list(item) for item in LOCOMO_SAMPLE[: args.locomo]] if data else [],
        "totals": totals(rows),
        "rows": list(rows),
    }
    if quiet:
        with contextlib.redirect_stdout(io.StringIO()):
            save("llm_extraction", payload, args.out)
    else:
        save("llm_extraction", payload, args.out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default="", help="comma-separated conversation ids (own ids, or 'locomo')")
    parser.add_argument("--record", type=Path, help="write the own batches' raw answers here as fixtures")
    parser.add_argument("--out", type=Path, help="results file (default bench/results/llm_extraction.json)")
    parser.add_argument("--locomo", type=int, default=len(LOCOMO_SAMPLE), help="LoCoMo batches (the first N)")
    parser.add_argument("--report", action="store_true", help="print the docs' table of the saved run")
    args = parser.parse_args(argv)
    if args.report:
        print("\n".join(report(json.loads((args.out or RESULTS / "llm_extraction.json").read_text()))))
        return 0

    from memory_engine.composition.providers.llm import llm_extractor as build_llm_extractor
    from memory_engine.settings import Settings

    settings = Settings()
    recorder = Recorder()
    extractor = build_llm_extractor(settings, http_client=recorder.client())
    wanted = {item for item in args.only.split(",") if item}
    data = locomo_path()
    chosen = [
        b
        for b in [*own_batches(), *locomo_batches(data)[: args.locomo]]
        if not wanted or b.conversation in wanted or b.source in wanted
    ]
    batches = in_run_order(chosen)
    registries: dict[str, dict[str, list[str]]] = {}
    rows = []
    for batch in batches:
        start = len(recorder.exchanges)
        known = registries.get(batch.conversation, {})
        outcome = measure(batch, lambda b, c: extractor.extract(b.turns, c), known)
        exchanges = recorder.exchanges[start:]
        row = row_of(batch, outcome, exchanges)
        rows.append(row)
        if outcome["extraction"] is not None:
            found = json.loads(str(outcome["extraction"].metadata["characters_json"]))
            registries[batch.conversation] = update_registry(known, found)
        # LoCoMo's answers quote its turns (CC BY-NC): kept in the ignored cache, never committed.
        where = args.record if batch.source == "own" else CACHE
        if where is not None:
            record(where, batch, outcome["context"], exchanges, outcome["seconds"])
        print(f"{batch.id}: {row['outcome']} in {row['seconds']} s ({row['requests']} requests)", flush=True)
        # Saved after every batch: a run of hours on a busy machine keeps what it measured.
        _save(settings, data, args, rows, quiet=batch is not batches[-1])
    print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
