"""Every route fuzzed with text that is not Unicode text: how many answers of each status, and how
many 500s (issue 42 §4: 28 × 500 from lone surrogates on 8c95e42; target 0).

    python -m bench.quality.unencodable_fuzz

The cases are those of tests/hardening/test_unencodable_text.py, generated from functions/routes.py
and each route's events/ sample: every string and every object key of a route's body holding each
kind of lone surrogate (JSON `\\ud800` escapes) and each kind of bytes that are not UTF-8, and every
route's query string, path parameter and a header holding a lone surrogate; each request goes
through the local stack's dispatcher (the local server's routing and handlers, a fake chat
upstream). The test asserts each answer; this counts them all. Exact: no timing, no load.
Writes bench/results/unencodable_fuzz.json.
"""

from __future__ import annotations

import importlib
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import print_table, save
from functions.routes import ROUTES

# The test's own case generation and stack, read at run time (the tests are not type-checked
# with the benchmarks).
cases_of: Any = importlib.import_module("tests.hardening.test_unencodable_text")
stacks: Any = importlib.import_module("tests.fakes.stack")


def _cases(stack: Any) -> list[tuple[str, str, int]]:
    """(route, kind of input, status) for every case."""
    sample, url, places, replaced = cases_of.sample, cases_of.url, cases_of.places, cases_of.replaced
    key = stack.key_for(cases_of.TENANT)
    out: list[tuple[str, str, int]] = []
    for route in cases_of.BODY_ROUTES:
        s = sample(route.function)
        name = f"{route.method} {route.path}"
        for where, is_key in places(s.body):
            for text in cases_of.UNENCODABLE.values():
                body, _ = replaced(s.body, where, is_key, text)
                status, _, _ = stack.call(route.method, url(s), raw=json.dumps(body).encode(), key=key)
                out.append((name, "surrogate in the body", status))
            for raw_text in cases_of.NOT_UTF8.values():
                body, _ = replaced(s.body, where, is_key, "@PLACE@")
                raw = json.dumps(body).encode().replace(b"@PLACE@", raw_text)
                status, _, _ = stack.call(route.method, url(s), raw=raw, key=key)
                out.append((name, "bytes not UTF-8 in the body", status))
    for route in ROUTES:
        s = sample(route.function)
        name = f"{route.method} {route.path}"
        raw_body = None if s.body is None else json.dumps(s.body).encode()
        query_name = next(iter(s.query), "page")
        targets: list[tuple[str, dict[str, str]]] = [
            (f"{url(s, {})}?{query_name}=x\ud800", {}),
            (url(s), {"Application-ID": "game\udfff"}),
        ]
        path_name = next(iter(s.path_parameters), None)
        if path_name is not None:
            value = s.path_parameters[path_name]
            targets.append((url(s).replace(value, value + "\ud800", 1), {}))
        for target, headers in targets:
            sent = {"Content-Type": "application/json", "Authorization": f"Bearer {key}", **headers}
            status, _, _ = stack.call(route.method, target, raw=raw_body, headers=sent)
            out.append((name, "surrogate in the query, path or a header", status))
    return out


def main() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="unencodable-fuzz-") as folder,
        stacks.local_stack(Path(folder)) as stack,
    ):
        cases = _cases(stack)
    statuses = Counter(status for _, _, status in cases)
    by_kind: dict[str, Counter[int]] = {}
    for _, kind, status in cases:
        by_kind.setdefault(kind, Counter())[status] += 1
    routes = sorted({name for name, _, _ in cases})
    fives = [f"{name} ({kind}): {status}" for name, kind, status in cases if status >= 500]
    rows: list[dict[str, Any]] = [
        {"input": kind, "cases": sum(counts.values()), **{str(s): n for s, n in sorted(counts.items())}}
        for kind, counts in by_kind.items()
    ]
    fived = sum(count for status, count in statuses.items() if status >= 500)
    table = [[row["input"], row["cases"], dict(by_kind[row["input"]])] for row in rows]
    print_table(["input", "cases", "statuses"], table)
    print(f"{len(cases)} cases over {len(routes)} routes: {fived} × 5xx")
    save(
        "unencodable_fuzz",
        {
            "cases": len(cases),
            "routes": len(routes),
            "answers_5xx": fived,
            "statuses": {str(status): count for status, count in sorted(statuses.items())},
            "by_input": rows,
            "5xx_cases": fives[:50],
        },
    )


if __name__ == "__main__":
    main()
