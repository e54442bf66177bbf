"""Every example of the README and docs/ runs, in order, on a fresh data dir: each ```bash and
```python block of a page, against a local server of its own (its chat upstream a local OpenAI
stub), with `$KEY`, `$API` and `${H[@]}` set as the README's walk-through sets them and the
page's `http://127.0.0.1:8080` pointed at that server. A block that cannot run here (it deploys to
AWS, needs a model server, serves until stopped) says so on the line before it:
`<!-- not run: why -->`; every other block is run, so an example added to the docs is tested."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import API_KEY, ROOT, started_with_chat_stub
from tests.e2e.doors.conftest import door_env
from tests.fakes.openai_server import FakeOpenAIServer, chat_completion

pytestmark = pytest.mark.e2e

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"bash": "bash", "sh": "bash", "python": "python"}
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    code: str
    not_run: str | None

    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order, with the reason a block is not run, if it says one."""
    lines = page.read_text().split("\n")
    found: list[Block] = []
    n = 0
    while n < len(lines):
        opened = FENCE.match(lines[n])
        if not opened:
            n += 1
            continue
        indent, language = opened.groups()
        end = next(k for k in range(n + 1, len(lines)) if lines[k].strip() == "```")
        body = "\n".join(line.removeprefix(indent) for line in lines[n + 1 : end])
        reason = NOT_RUN.search(lines[n - 1]) if n else None
        found.append(Block(page.name, n + 1, language, body, reason.group(1) if reason else None))
        n = end + 1
    return found


def runnable(page: Path) -> list[Block]:
    return [block for block in blocks(page) if block.language in RUN and block.not_run is None]


def answers(output: str) -> Iterator[Any]:
    """The JSON documents a block printed, one after another; anything else is skipped."""
    decoder = json.JSONDecoder()
    at = 0
    while at < len(output):
        start = min((i for i in (output.find("{", at), output.find("[", at)) if i >= 0), default=-1)
        if start < 0:
            return
        try:
            document, at = decoder.raw_decode(output, start)
        except ValueError:
            at = start + 1
            continue
        yield document


def refusal(document: Any) -> bool:
    """An error answer in any of the API's envelopes (native, game, OpenAI's)."""
    if not isinstance(document, dict):
        return False
    if document.get("status") == "error" or isinstance(document.get("error"), dict):
        return True
    return "msg" in document and document.get("code") not in (0, None)


def test_every_runnable_block_of_the_docs_is_bash_or_python_or_says_why_not() -> None:
    unexplained = [
        block.where()
        for page in PAGES
        for block in blocks(page)
        if block.language in ("ts", "js", "javascript", "typescript") and block.not_run is None
    ]
    # TypeScript examples are run by the TypeScript client's own tests; the rest are listed here.
    assert all(where.startswith("clients.md") for where in unexplained), unexplained


@pytest.mark.parametrize("page", [page for page in PAGES if runnable(page)], ids=lambda page: page.name)
def test_the_examples_of_a_page_run_in_order_on_a_fresh_data_dir(page: Path, tmp_path: Path) -> None:
    # Given a fresh local server, a project folder holding its key as `make run` leaves it, and a
    # chat upstream that answers every request
    with FakeOpenAIServer() as upstream:
        upstream.script(*[(200, chat_completion("Noted."))] * 200)
        server = started_with_chat_stub(tmp_path / "data", upstream.base_url)
        project = tmp_path / "project"
        (project / ".memory-engine").mkdir(parents=True)
        (project / ".memory-engine" / "api_key").write_text(API_KEY + "\n")
        env = {
            **door_env(server),
            "MEMORY_ENGINE_DATA_DIR": str(project / ".memory-engine"),
            # `memory-engine` and `memory-engine-mcp` as an activated venv has them
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        headers = '-H "Authorization: Bearer $KEY" -H "Content-Type: application/json"'
        prelude = f"KEY={API_KEY}\nAPI={server.url}\nH=({headers})\n"
        failures: list[str] = []
        try:
            # When each block runs, in the page's order
            for block in runnable(page):
                code = block.code.replace("http://127.0.0.1:8080", server.url)
                if RUN[block.language] == "bash":
                    command = ["bash", "-c", prelude + code]
                else:
                    command = [sys.executable, "-c", code]
                done = subprocess.run(
                    command, cwd=project, env=env, capture_output=True, text=True, timeout=240
                )
                refused = [doc for doc in answers(done.stdout) if refusal(doc)]
                if done.returncode != 0 or refused:
                    failures.append(f"{block.where()} ({block.language}): {done.stderr[-1500:]} {refused}")
        finally:
            server.stop()
    # Then every one succeeded, and no answer was an error
    assert failures == [], "\n".join(failures)
