"""The memory inspector in a real headless browser (Debian's chromium and chromedriver, driven by
selenium) against a local server seeded with a Korean conversation: enter the key, see the
memories, run a search and read the score parts, delete a dialog and see the cascade; page through
more sessions and fact scopes than one page holds ("more" buttons). And the page
served as a bucket would serve it (no headers) with a crafted `?api=` on another origin: nothing
reaches that origin, the stored key least of all.

Screenshots go to $MEMORY_ENGINE_ARTIFACTS (default: the test's tmp dir, printed on failure);
`INSPECTOR_SCREENSHOT=docs/img/inspector.png` also writes the README's picture.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from memory_engine_app.server.inspector_assets import INSPECTOR_FOLDER
from tests.e2e.conftest import API_KEY, LocalServer, wait_for, wait_on_work

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
THREAD, SESSION = "민지-thread", "민지-session-1"
LINES = [
    "우리 강아지 이름은 후추야. 검은 푸들이야.",
    "오늘 아침에 후추랑 한강 공원에서 산책했어.",
    "점심은 회사 근처에서 김치찌개를 먹었어.",
    "다음 주 토요일에 부산으로 여행을 가.",
    "요즘 기타를 배우고 있어. 코드 잡기가 어려워.",
    "동생 지훈이가 내일 생일이라 케이크를 샀어.",
    "비가 와서 후추가 산책을 못 해 심심해해.",
    "퇴근하고 요가 수업에 다녀왔어.",
    "주말에 할머니 댁에 가서 만두를 빚었어.",
    "새로 산 책은 등대지기에 관한 소설이야.",
]
WAIT = 30
SESSION_VIEW = "/v1/inspect/session?" + urlencode({"session_uuid": SESSION})


def turns() -> list[dict[str, Any]]:
    return [
        {
            "uuid": f"d{n}",
            "query": LINES[n % len(LINES)] + ("" if n < len(LINES) else f" ({n}일째)"),
            "answer": "그렇구나, 더 얘기해 줘.",
            "npc_id": "서연",
        }
        for n in range(20)
    ]


@pytest.fixture(scope="module")
def seeded(server: LocalServer) -> LocalServer:
    """A session of 20 turns: two memories of 8 turns each once extraction ran, 4 turns buffered."""
    for dialog in turns():
        body = {
            "session_uuid": SESSION,
            "parent_session_uuid": THREAD,
            "new_dialog": dialog,
            "user_name": "민지",
            "language": "ko",
        }
        assert server.call("POST", "/v1/engine/consolidate/", body)[0] == 200

    def extracted() -> bool:
        status, body = server.call("GET", SESSION_VIEW)
        return status == 200 and len(body["memories"]) == 2

    wait_on_work(server, extracted)
    return server


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get("MEMORY_ENGINE_ARTIFACTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("inspector-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser(artifacts: Path) -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("chromium and chromium-driver are not installed: `make browser-deps` installs them")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="inspector-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1440,1000",
        "--lang=ko-KR",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    # The driver's path is given, so selenium-manager never looks for (or downloads) one.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver: Any, artifacts: Path, name: str) -> Path:
    path = artifacts / f"{name}.png"
    driver.save_screenshot(str(path))
    wanted = os.environ.get("INSPECTOR_SCREENSHOT")
    if wanted and name == "inspector-memories":
        shutil.copyfile(path, wanted)
    return path


def find(driver: Any, css: str, seconds: float = WAIT) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(
        expected_conditions.visibility_of_element_located((By.CSS_SELECTOR, css))
    )


def all_of(driver: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, css))


def test_the_inspector_shows_memories_explains_a_search_and_deletes_with_its_cascade(
    seeded: LocalServer, browser: Any, artifacts: Path
) -> None:
    driver = browser
    print(f"inspector screenshots in {artifacts}")
    # Given the page, opened from the local server, and the key entered
    driver.get(seeded.url + "/inspector/")
    find(driver, "#api-key").send_keys(API_KEY)
    find(driver, "#connect-button").click()
    assert driver.execute_script("return sessionStorage.getItem('memory-engine-inspector-key')") == API_KEY
    assert driver.execute_script("return localStorage.length") == 0

    # When the session is opened, its turns show in order with their state, in Korean
    find(driver, f"button.session[data-session='{SESSION}']").click()
    wait_for(lambda: len(all_of(driver, "#turns tbody tr")) == 20, WAIT)
    rows = all_of(driver, "#turns tbody tr")
    assert [row.get_attribute("data-dialog") for row in rows] == [f"d{n}" for n in range(20)]
    assert [row.get_attribute("data-status") for row in rows] == ["extracted"] * 16 + ["buffered"] * 4
    assert LINES[0] in rows[0].text and "서연" in rows[0].text

    # and the thread's memories show with every field
    find(driver, f"li[data-thread='{THREAD}'] > button.thread").click()
    wait_for(lambda: len(all_of(driver, "#thread-memories article.memory")) == 2, WAIT)
    # (two memories extracted in the same second: their order between them is not the point here)
    cards = all_of(driver, "#thread-memories article.memory")
    card = next(card for card in cards if "d0" in card.text)
    shown = {field.get_attribute("data-field") for field in card.find_elements("css selector", "dd")}
    assert {"summary", "keywords", "key facts", "key dialogue", "intent", "location", "characters"} <= shown
    assert "source turns" in shown and "d0" in card.text
    screenshot(driver, artifacts, "inspector-memories")

    # When a search runs
    find(driver, "#tabs button[data-tab='search']").click()
    find(driver, "#search-query").send_keys("강아지 후추 산책")
    find(driver, "#search-button").click()
    find(driver, "#hits li.hit")
    hits = all_of(driver, "#hits li.hit")
    # Then the page shows what the API answered, with its score parts where the server explains
    status, answer = seeded.call(
        "POST",
        "/v1/engine/retrieve/",
        {
            "parent_session_uuids": [THREAD],
            "user_input": {"query": "강아지 후추 산책"},
            "options": {"limit": 5, "explain": True},
        },
    )
    assert status == 200
    assert [hit.get_attribute("data-memory") for hit in hits] == [hit["memory_id"] for hit in answer["data"]]
    first, expected = hits[0], answer["data"][0]
    assert f"score {expected['score']:.4f}" in first.text
    parts = expected.get("score_parts")
    if parts:
        names = {
            row.get_attribute("data-part")
            for row in first.find_elements("css selector", ".parts tr[data-part]")
        }
        assert names == {str(name) for name in (parts if isinstance(parts, dict) else range(len(parts)))}
    else:
        assert first.find_elements("css selector", ".no-parts")
    screenshot(driver, artifacts, "inspector-search")

    # When an extracted dialog is deleted, the confirmation shows the cascade first
    find(driver, "#tabs button[data-tab='session']").click()
    find(driver, "#turns tr[data-dialog='d3'] button.delete-dialog").click()
    find(driver, "#confirm[open]")
    cascade = [item.get_attribute("data-id") for item in all_of(driver, "#confirm-body .cascade li")]
    stored = seeded.call("GET", SESSION_VIEW)[1]
    memory_id = next(turn["memory_id"] for turn in stored["turns"] if turn["dialog_uuid"] == "d3")
    assert cascade == [memory_id, "d3", "d0", "d1", "d2", "d4", "d5", "d6", "d7"]
    screenshot(driver, artifacts, "inspector-delete-confirm")
    find(driver, "#confirm-ok").click()

    # Then the turn is gone, its siblings are back in the buffer, and the result says so
    find(driver, "#delete-result")
    wait_for(lambda: len(all_of(driver, "#turns tbody tr")) == 19, WAIT)
    states = {
        row.get_attribute("data-dialog"): row.get_attribute("data-status")
        for row in all_of(driver, "#turns tbody tr")
    }
    assert "d3" not in states
    assert {states[f"d{n}"] for n in (0, 1, 2, 4, 5, 6, 7)} == {"buffered"}
    assert memory_id in find(driver, "#delete-result").text
    screenshot(driver, artifacts, "inspector-deleted")
    assert seeded.call("GET", SESSION_VIEW)[1]["counts"]["buffered"] >= 11


def test_the_queue_tab_lists_the_local_queue(seeded: LocalServer, browser: Any) -> None:
    browser.get(seeded.url + "/inspector/")
    find(browser, "#api-key").clear()
    find(browser, "#api-key").send_keys(API_KEY)
    find(browser, "#connect-button").click()

    find(browser, "#tabs button[data-tab='queue']").click()

    panel = find(browser, "#panel-queue h2")
    assert "Pending jobs" in panel.text
    assert "cannot list" not in find(browser, "#panel-queue").text  # the local queue lists its jobs


# -- more than one page of sessions and scopes -----------------------------------------------------

PAGE = 100  # the page the inspector asks for (the route's default limit)
SESSIONS, SCOPES = PAGE + 30, PAGE + 5


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A server of its own holding more sessions and more fact scopes than one page of each."""
    server = LocalServer(tmp_path_factory.mktemp("paged"))
    server.start()
    for n in range(SESSIONS):
        body = {
            "session_uuid": f"paged-{n:03d}",
            "parent_session_uuid": f"paged-thread-{n // 10:02d}",
            "new_dialog": {"uuid": "d0", "query": f"page test {n}", "answer": "ok"},
        }
        assert server.call("POST", "/v1/engine/consolidate/", body)[0] == 200
    for n in range(SCOPES):
        fact = {"fact": f"Fact number {n}.", "scope": {"user_id": f"paged-{n:03d}"}}
        assert server.call("POST", "/v1/memories", fact)[0] == 200
    yield server
    server.stop()


def test_the_more_buttons_page_through_every_session_and_scope(paged: LocalServer, browser: Any) -> None:
    # Given the page on a tenant with more sessions and scopes than one page holds
    browser.get(paged.url + "/inspector/")
    find(browser, "#api-key").clear()
    find(browser, "#api-key").send_keys(API_KEY)
    find(browser, "#connect-button").click()
    wait_for(lambda: len(all_of(browser, "#threads button.session")) == PAGE, WAIT)
    # Then the first page of each is listed, with a button for the next
    assert len(all_of(browser, "#scopes > li")) == PAGE + 1  # the scopes and the button
    shown = [button.get_attribute("data-session") for button in all_of(browser, "#threads button.session")]
    assert shown == [f"paged-{n:03d}" for n in range(PAGE)]

    # When "more sessions" is pressed, the next page joins the list (a thread cut by the page
    # boundary stays one entry) and the button goes: it was the last page
    find(browser, "#more-threads").click()
    wait_for(lambda: len(all_of(browser, "#threads button.session")) == SESSIONS, WAIT)
    shown = [button.get_attribute("data-session") for button in all_of(browser, "#threads button.session")]
    assert shown == [f"paged-{n:03d}" for n in range(SESSIONS)]
    assert len(all_of(browser, "#threads li[data-thread]")) == len({n // 10 for n in range(SESSIONS)})
    assert not all_of(browser, "#more-threads")

    # And "more scopes" does the same for the fact scopes
    find(browser, "#more-scopes").click()
    wait_for(lambda: len(all_of(browser, "#scopes > li")) == SCOPES, WAIT)
    assert not all_of(browser, "#more-scopes")
    assert all("paged-" in item.text for item in all_of(browser, "#scopes > li"))


# -- the key stays home ---------------------------------------------------------------------------


class Listener(BaseHTTPRequestHandler):
    """An attacker's origin: records every request and allows any cross-origin call (CORS)."""

    seen: list[tuple[str, str, str | None]]

    def _answer(self) -> None:
        self.seen.append((self.command, self.path, self.headers.get("Authorization")))
        self.send_response(200)
        for name in ("Origin", "Headers", "Methods"):
            self.send_header(
                f"Access-Control-Allow-{name}", "*" if name != "Origin" else self.headers.get("Origin", "*")
            )
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_OPTIONS = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Bucket(SimpleHTTPRequestHandler):
    """The inspector's files as S3 behind CloudFront without a headers policy serves them."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, list[tuple[str, str, str | None]]]]:
    """(the page's URL on a bare static server, the listener's origin, what the listener got)."""
    seen: list[tuple[str, str, str | None]] = []
    listener = ThreadingHTTPServer(("127.0.0.1", 0), type("Seen", (Listener,), {"seen": seen}))
    bucket = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Bucket, directory=str(INSPECTOR_FOLDER)))
    for server in (listener, bucket):
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield (
            f"http://127.0.0.1:{bucket.server_address[1]}/index.html",
            f"127.0.0.1:{listener.server_address[1]}",
            seen,
        )
    finally:
        for server in (listener, bucket):
            server.shutdown()
            server.server_close()


@pytest.mark.parametrize(
    "crafted", ["http://{host}", "//{host}", "/\\{host}", "/.//{host}", "http://{host}/prod"]
)
def test_a_crafted_api_on_another_origin_sends_nothing_there(
    browser: Any, served: tuple[str, str, list[tuple[str, str, str | None]]], crafted: str
) -> None:
    page, host, seen = served
    # Given a tab that holds a key, on the page served with no headers at all
    browser.get(page)
    browser.execute_script(f"sessionStorage.setItem('memory-engine-inspector-key', '{API_KEY}')")
    # When a crafted link opens the page with ?api= on the attacker's origin, and the user presses
    # Connect (the form submitted, whether its button is enabled or not)
    browser.get(f"{page}?api={quote(crafted.format(host=host), safe='')}")
    find(browser, "#status")
    browser.execute_script("document.getElementById('connect').requestSubmit()")
    browser.execute_script("return new Promise((done) => setTimeout(done, 1500))")
    # Then nothing reached that origin (no preflight, no key), and the page says why
    assert seen == []
    assert "its own origin" in find(browser, "#status").text


def test_the_pages_own_policy_blocks_a_call_to_another_origin_even_from_script(
    browser: Any, served: tuple[str, str, list[tuple[str, str, str | None]]]
) -> None:
    page, host, seen = served
    browser.get(page)

    outcome = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"fetch('http://{host}/v1/inspect/threads', {{headers: {{Authorization: 'Bearer {API_KEY}'}}}})"
        ".then(() => done('sent'), () => done('blocked'));"
    )

    assert outcome == "blocked" and seen == []
