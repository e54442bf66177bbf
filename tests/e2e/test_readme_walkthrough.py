"""The README's curl walk-through, pasted as one block into a shell, does what the README shows."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import API_KEY, ROOT, LocalServer, wait_on_work

pytestmark = pytest.mark.e2e


def walkthrough() -> str:
    """The first bash block under the README's "Walk-through (curl)" heading."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Walk-through (curl)", 1)[1]
    found = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert found, "the README's walk-through has no bash block"
    return found.group(1)


def answers(output: str) -> Iterator[dict[str, Any]]:
    """The JSON documents curl printed, one after another (a body need not end with a newline)."""
    decoder = json.JSONDecoder()
    at = 0
    while True:
        at = len(output) - len(output[at:].lstrip())
        if at >= len(output):
            return
        document, at = decoder.raw_decode(output, at)
        yield document


# In place of the walk-through's `sleep 2` (a moment on an idle laptop, as the README says): poll
# until the memory shows, as long as extraction takes on a busy host (it took longer than 2 s with
# both cores busy, and the retrieve then found the raw turns, as the README says it would).
WAIT_FOR_THE_MEMORY = (
    'for _ in $(seq 150); do curl -s "${H[@]}" $API/v1/engine/retrieve/ -d \'{'
    '"parent_session_uuids": ["thread-1"], "recent_dialogs": [], "user_input": {"query": "cat"}}\' '
    '| grep -q \'"kind": *"memory"\' && break; sleep 1; done'
)


def warm_up(server: LocalServer) -> None:
    """One extraction in a thread of its own, so the worker has loaded its model (a user reads
    `make run`'s banner before pasting; a loaded CI machine may take longer than that to start)."""
    api = server.client()
    api.consolidate("warm-up", "warm-up", {"uuid": "w1", "query": "Warming up."}, force_summary=True)
    wait_on_work(server, lambda: any(hit.kind == "memory" for hit in api.retrieve("warm-up", "warming").data))


def test_the_walkthrough_pasted_as_one_block_retrieves_the_memory(tmp_path: Path) -> None:
    # Given a fresh local server, and the walk-through with its key and address pointed at it
    server = LocalServer(tmp_path / "data")
    server.start()
    try:
        warm_up(server)
        script = walkthrough()
        script = re.sub(r"^KEY=.*$", f"KEY={API_KEY}", script, count=1, flags=re.MULTILINE)
        script = re.sub(r"^API=.*$", f"API={server.url}", script, count=1, flags=re.MULTILINE)
        assert "\nsleep 2\n" in script, "the walk-through no longer waits where this test expects"
        script = script.replace("\nsleep 2\n", f"\n{WAIT_FOR_THE_MEMORY}\n", 1)

        # When the whole block runs at once
        run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=200, check=True)
    finally:
        server.stop()

    # Then every call succeeded, and the retrieve found the memory of d1-d2, not a raw turn
    documents = list(answers(run.stdout))
    assert documents[0] == {"status": "ok", "service": "memory-engine"}
    retrieved = next(doc for doc in documents if isinstance(doc.get("data"), list))
    top = retrieved["data"][0]
    assert top["kind"] == "memory"
    assert top["source_dialog_uuids"] == ["d1", "d2"]
    assert "Lisbon" in top["content"]
    assert all(doc.get("status") != "error" for doc in documents)
