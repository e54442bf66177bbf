"""The memory inspector's rule for `?api=` (inspector/origin.js), run under Node: a base that
leaves the page's origin by any spelling is refused by the page's own script, not only by its
Content-Security-Policy (a page served without headers, or a browser that ignores the policy,
would otherwise send the stored key there). The same cases in a browser:
tests/e2e/test_inspector_browser.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from memory_engine_app.server.inspector_assets import INSPECTOR_FOLDER

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node (as dynalite does: make dynalite)")
PAGE = "http://127.0.0.1:8080/inspector/index.html"
HOST = "evil.example:9000"
LEAVING = [
    f"http://{HOST}",
    f"https://{HOST}/prod",
    f"//{HOST}",
    f"/\\{HOST}",
    f"\\\\{HOST}",
    f"/.//{HOST}",
    f"/..//{HOST}",
    f"/./\\{HOST}",
    f"/inspector/..//{HOST}",
    f"/\t/{HOST}",
    f"/\n/{HOST}",
    f" //{HOST}",
    f"https:{HOST}",
    f"http:\\\\{HOST}",
    f"ftp://{HOST}",
    f"javascript:fetch('//{HOST}')",
    f"data:text/plain,{HOST}",
    "http://user:pass@127.0.0.1:8080/prod",
    f"/prod?next=//{HOST}",
    f"/prod#//{HOST}",
    "http://127.0.0.1:8081/prod",
    f"http://127.0.0.1.{HOST}/prod",
]
STAYING = {
    "/prod": "/prod",
    "/prod/": "/prod",
    "/prod//": "/prod",
    "prod": "/inspector/prod",
    "./prod": "/inspector/prod",
    "../prod": "/prod",
    "/": "",
    "http://127.0.0.1:8080/prod": "/prod",
    "/%2F%2Fevil.example": "/%2F%2Fevil.example",  # encoded: a path segment on this origin
    "/a%5Cb": "/a%5Cb",
    "/세션": "/%EC%84%B8%EC%85%98",
    # The page's own scheme without `//` is read as a path on this origin: harmless, so accepted
    f"http:{HOST}": f"/inspector/{HOST}",
    f"http:/{HOST}": f"/{HOST}",
}


def run_rule(cases: list[str]) -> list[dict[str, Any]]:
    """apiBase(case, PAGE) for each case, and the address a call to the threads view would use."""
    script = (
        f"const {{ apiBase, apiTarget }} = require({json.dumps(str(INSPECTOR_FOLDER / 'origin.js'))});"
        f"const page = {json.dumps(PAGE)};"
        f"const cases = {json.dumps(cases)};"
        "console.log(JSON.stringify(cases.map((c) => { const api = apiBase(c, page);"
        " const target = api.refused === null ? apiTarget(api.base, '/v1/inspect/threads', page) : null;"
        " return { ...api, target }; })));"
    )
    assert NODE is not None
    done = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60, check=True)
    return list(json.loads(done.stdout))


def test_an_api_that_leaves_the_pages_origin_by_any_spelling_is_refused() -> None:
    # Given ?api= values that reach another host, directly or once a route is appended
    # When the page's rule reads each of them
    results = run_rule(LEAVING)
    # Then each is refused: no base, and the refused value kept to say so
    accepted = {
        case: result for case, result in zip(LEAVING, results, strict=True) if result["refused"] != case
    }
    assert accepted == {}
    assert all(result["base"] == "" and result["target"] is None for result in results)


def test_an_api_on_the_pages_origin_gives_a_base_path_and_calls_stay_there() -> None:
    # Given ?api= values that name a path on the page's own origin
    results = run_rule(list(STAYING))
    # Then each gives its plain base path, and a call under it goes to the page's origin
    assert {case: result["base"] for case, result in zip(STAYING, results, strict=True)} == STAYING
    assert all(
        result["refused"] is None and result["target"].startswith("http://127.0.0.1:8080/")
        for result in results
    )


def test_no_api_means_the_pages_own_origin_at_its_root() -> None:
    [result] = run_rule([""])

    assert result == {"base": "", "refused": None, "target": "http://127.0.0.1:8080/v1/inspect/threads"}
