"""A job's visibility covers its worst case (issue 42 §7): with an LLM, a job that runs its
batches to their whole deadline ends before it could be handed out again, even if every renewal
of its receipt failed; in a Lambda, the function's remaining time is covered too."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from memory_engine import deadline
from memory_engine.deadline import Deadline
from memory_engine.extraction.budget import JobBudget
from memory_engine.limits import Limits
from memory_engine.models.api import ConsolidateRequest
from memory_engine.models.messages import ExtractionJob
from memory_engine.ports import Extraction, ExtractionContext
from memory_engine.settings import JOB_TAIL_SECONDS, Settings
from memory_engine.usecases import consolidate, extract, jobs
from tests.fakes.engine import fake_engine
from tests.fakes.ports import EchoExtractor, ListQueue

TENANT = "acme"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowExtractor(EchoExtractor):
    """Each batch takes the next of `durations` seconds of `clock` (a model answering slowly)."""

    def __init__(self, clock: Clock, durations: Sequence[float]) -> None:
        super().__init__()
        self._clock = clock
        self._durations = list(durations)

    def extract(self, turns: Sequence[object], context: ExtractionContext) -> Extraction:  # type: ignore[override]
        self._clock.now += self._durations.pop(0)
        return super().extract(turns, context)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "limits",
    [
        {},
        {"worker_job_seconds": 600, "llm_batch_seconds": 600},
        {"worker_visibility_seconds": 5, "llm_batch_seconds": 30, "llm_timeout_seconds": 900},
        {"worker_job_seconds": 0.5, "llm_batch_seconds": 3600},
    ],
)
def test_with_an_llm_the_visibility_covers_a_jobs_time_its_last_batchs_deadline_and_the_tail(
    limits: dict[str, float],
) -> None:
    # Given any limits on a job, its batches and its requests
    settings = Settings(extractor="llm", **limits)  # type: ignore[arg-type]
    # Then a job in hand stays invisible past the latest a batch may start plus that batch's bound
    worst = settings.worker_job_seconds + settings.llm_batch_seconds + JOB_TAIL_SECONDS
    assert settings.job_worst_case_seconds == worst
    assert settings.job_visibility_seconds >= worst


def test_a_job_whose_batches_take_their_whole_deadline_ends_within_its_visibility(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given 24 buffered turns (3 batches), an LLM whose first batch ends just before the job's
    # time and whose every later batch takes the batch's whole deadline
    clock = Clock()
    settings = Settings(extractor="llm", llm_model="m", extraction_threshold=1000)  # type: ignore[call-arg]
    engine = fake_engine(extractor="llm", llm_model="m", extraction_threshold=1000)
    durations = [settings.worker_job_seconds - 0.1, *[settings.llm_batch_seconds] * 2]
    engine = dataclasses.replace(engine, extractor=SlowExtractor(clock, durations))
    monkeypatch.setattr(
        JobBudget,
        "of",
        classmethod(lambda cls, s: cls(s.job_seconds, s.extraction_job_max_chars, clock=clock)),
    )
    for n in range(24):
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-s1",
            "new_dialog": {"uuid": f"d{n:02d}", "query": f"turn {n}"},
            "options": {"force_summary": n == 23},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    assert isinstance(engine.queue, ListQueue)
    [job] = [job for job in engine.queue.pop_all() if isinstance(job, ExtractionJob)]
    # When the job runs
    written = extract.run(engine, job)
    # Then it took two batches (the second started within the job's time) and left the third
    assert len(written) == 2
    # And it ran no longer than its worst case less the tail, so its visibility covered it
    assert clock.now <= settings.job_worst_case_seconds - JOB_TAIL_SECONDS
    assert clock.now < settings.job_visibility_seconds


def test_in_a_lambda_a_job_in_hand_stays_invisible_past_the_functions_remaining_time() -> None:
    # Given a worker Lambda with 880 s left, longer than the settings' worst case
    settings = Settings(extractor="llm", llm_model="m")  # type: ignore[call-arg]
    with deadline.within(Deadline(880.0, clock=lambda: 0.0)):
        # When the lease's visibility is chosen
        seconds = jobs.lease_seconds(Limits.of(settings))
    # Then it outlasts the function, which stops the job at its timeout
    assert seconds >= 880 + jobs.LAMBDA_TAIL_S > settings.job_visibility_seconds
    # And with no deadline (the local worker) it is the settings' worst case
    assert jobs.lease_seconds(Limits.of(settings)) == settings.job_visibility_seconds
