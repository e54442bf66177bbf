"""`memory-engine jobs list|retry` against the configured queue: the local dead-letter table, and
the SQS dead-letter queue (moto)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_engine.composition import wiring
from memory_engine.models.messages import ExtractionJob
from memory_engine.settings import get_settings, reset_settings
from memory_engine_app import cli
from tests.contract.builders import make_session, make_turn
from tests.fakes.aws import REGION, create_queue, create_table, moto_aws

JOB = ExtractionJob(tenant="tenant-a", session_uuid="session-1")


@pytest.fixture(params=["local", "aws"])
def configured(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(tmp_path))
    reset_settings()
    wiring.reset()
    if request.param == "aws":
        with moto_aws():
            monkeypatch.setenv("MEMORY_ENGINE_BACKEND", "aws")
            monkeypatch.setenv("MEMORY_ENGINE_TABLE_NAME", create_table())
            monkeypatch.setenv("MEMORY_ENGINE_QUEUE_URL", create_queue())
            monkeypatch.setenv("AWS_REGION", REGION)
            reset_settings()
            yield request.param
    else:
        yield request.param
    wiring.reset()
    reset_settings()


def a_dead_job(session: str = "session-1") -> None:
    queue = wiring.build_queue(get_settings())
    queue.send(JOB.model_copy(update={"session_uuid": session}))
    message = queue.receive(1)[0]  # type: ignore[attr-defined]
    queue.bury(message, "LlmUnavailable: The LLM endpoint failed 4 times in a row.")  # type: ignore[attr-defined]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_jobs_list_shows_each_dead_job_with_its_error(
    configured: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a_dead_job()

    code, out, err = run(capsys, "jobs", "list")

    assert code == 0 and "1 dead job(s)" in err
    assert "tenant-a#session-1" in out and "LlmUnavailable: The LLM endpoint failed" in out


def test_jobs_list_json_is_one_object_per_dead_job(
    configured: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a_dead_job("s1")
    a_dead_job("s2")

    code, out, _ = run(capsys, "jobs", "list", "--json")

    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and sorted(row["job"]["session_uuid"] for row in rows) == ["s1", "s2"]


def test_jobs_retry_by_id_queues_that_job_again(configured: str, capsys: pytest.CaptureFixture[str]) -> None:
    a_dead_job("s1")
    a_dead_job("s2")
    _, out, _ = run(capsys, "jobs", "list", "--json")
    ids = {json.loads(line)["job"]["session_uuid"]: json.loads(line)["id"] for line in out.splitlines()}

    code, out, _ = run(capsys, "jobs", "retry", ids["s1"])

    assert code == 0 and "tenant-a#s1" in out
    queue = wiring.build_queue(get_settings())
    assert [message.job.session_uuid for message in queue.receive(10)] == ["s1"]  # type: ignore[attr-defined]
    assert [dead.job.session_uuid for dead in queue.dead_letters()] == ["s2"]  # type: ignore[attr-defined]


def test_jobs_retry_all_empties_the_dead_letters(configured: str, capsys: pytest.CaptureFixture[str]) -> None:
    a_dead_job("s1")
    a_dead_job("s2")

    code, _, err = run(capsys, "jobs", "retry", "--all")

    assert code == 0 and "2 job(s) queued again" in err
    assert run(capsys, "jobs", "list")[1] == ""


def test_jobs_retry_needs_ids_or_all_and_names_an_unknown_id(
    configured: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "jobs", "retry")[0] == 2

    code, _, err = run(capsys, "jobs", "retry", "no-such-id")

    assert code == 1 and "no dead job no-such-id" in err


def test_a_dead_job_whose_session_was_extracted_since_is_listed_as_resolved(
    configured: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a dead extraction job whose session has nothing left to extract (extracted since)
    a_dead_job("s1")
    # When the dead jobs are listed
    code, out, err = run(capsys, "jobs", "list", "--json")
    # Then it is marked resolved: retrying it would find nothing to do
    [row] = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and row["resolved"] is True and "1 resolved" in err


def test_a_dead_job_whose_turns_still_wait_is_listed_as_open(
    configured: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a session with a full buffer and its dead extraction job
    store = wiring.build_store(get_settings())
    for n in range(20):
        store.append_turn(make_session("s1"), make_turn(f"d{n}", session_uuid="s1"))
    a_dead_job("s1")
    # When the dead jobs are listed
    code, out, _ = run(capsys, "jobs", "list")
    # Then it is open: retrying it would extract those turns
    assert code == 0 and "  open  " in out


def test_jobs_list_says_which_data_it_reads(
    configured: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, _, err = run(capsys, "jobs", "list")

    expected = "AWS backend: table" if configured == "aws" else f"data dir {tmp_path.resolve()}"
    assert err.startswith(f"memory-engine jobs: {expected}")
