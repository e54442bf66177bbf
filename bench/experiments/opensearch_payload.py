"""What a retrieve's BM25 hits weigh on the wire from OpenSearch, and what reading them costs.

    python -m bench.experiments.opensearch_payload [--runs 7]

The lexical search of each kind brings back every hit's vector, so that a document found only by
its words gets its cosine to the query. This builds the `_msearch` response part of one retrieve
at the default sizes (`RetrievalConfig`'s memory and turn candidates, 384 dimensions, turn text
and window vector as stored) twice: with each hit's vector as the k-NN field's numbers (what
`_source` returned before half vectors) and as the half copy (`half_vector`, base64 float16), and
times decoding the JSON and computing the cosines, the adapter's way for the half copy and the
former way for the numbers. No cluster here: what the cluster spends serialising `_source` is not measured.
Writes bench/results/opensearch_payload.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bench.common import save
from memory_engine.adapters.aws import opensearch_hits
from memory_engine.adapters.encoding import pack_half_text, unit_vector
from memory_engine.retrieval.config import RetrievalConfig

DIMENSION = 384
MEMORY_HITS, TURN_HITS = RetrievalConfig().memory_candidates, RetrievalConfig().turn_candidates
TURN_TEXT = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.\n8 May 2023"


def _vector(rng: random.Random) -> list[float]:
    return unit_vector([rng.gauss(0.0, 1.0) for _ in range(DIMENSION)])


def response(rng: random.Random, half: bool) -> str:
    """The two lexical responses of one retrieve as OpenSearch sends them."""
    parts = []
    for kind, size in (("memory", MEMORY_HITS), ("turn", TURN_HITS)):
        found = []
        for n in range(size):
            vector = _vector(rng)
            source: dict[str, Any] = {"doc_id": f"m{n}:{kind}", "memory_id": f"m{n}"}
            source.update({"half_vector": pack_half_text(vector)} if half else {"vector": vector})
            if kind == "turn":
                source.update(turn_text=TURN_TEXT, window_vector=pack_half_text(_vector(rng)))
            found.append({"_id": str(n), "_score": 3.0, "_source": source})
        parts.append({"hits": {"hits": found}})
    return json.dumps({"responses": parts})


def _former_cosines(body: dict[str, Any], query: Sequence[float]) -> list[tuple[float, float | None]]:
    """The adapter before half vectors: each hit's cosine from the numbers in `_source`, and its
    window's cosine as both read it."""
    return [
        (
            sum(a * b for a, b in zip(query, hit["_source"].get("vector") or [], strict=False)),
            opensearch_hits.window_cosine(hit["_source"], query),
        )
        for part in body["responses"]
        for hit in part["hits"]["hits"]
    ]


def _read(raw: str, query: Sequence[float], half: bool) -> int:
    body = json.loads(raw)
    if half:
        return sum(len(opensearch_hits.lexical_hits(part, query)) for part in body["responses"])
    return len(_former_cosines(body, query))


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(7)
    query = _vector(rng)
    rows = {}
    for name, half in (("numbers (before)", False), ("half vectors", True)):
        raw = response(random.Random(11), half)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            _read(raw, query, half)
            times.append((time.perf_counter() - started) * 1000)
        rows[name] = {"bytes": len(raw.encode()), "read_ms_median": statistics.median(times)}
        print(f"{name:18} {len(raw.encode()) / 1024:8.0f} KB   read {statistics.median(times):6.2f} ms")
    payload = {"hits": {"memory": MEMORY_HITS, "turn": TURN_HITS}, "dimension": DIMENSION, "rows": rows}
    save("opensearch_payload", payload)
    return payload


if __name__ == "__main__":
    main()
