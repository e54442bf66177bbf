"""The forming replay ranks a captured question exactly as the engine does, at any share power."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.quality.locomo import forming_tune, tune
from bench.quality.locomo.data import Question
from bench.quality.locomo.engine_run import TENANT
from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest
from memory_engine.usecases import consolidate
from tests.fakes.engine import fake_engine, run_worker

QUESTION = Question("thread-1", 0, 1, "tortoise", ("d19",), (3,))


@pytest.fixture
def engine() -> Engine:
    # Given 20 turns, d1-d16 extracted into two memories and d17-d20 still buffered; the tortoise
    # is named in d3 (extracted) and in d18 and d19 (buffered; d19, the shortest, matches best)
    engine = fake_engine()
    for n in range(1, 21):
        text = {3: "My tortoise Sheldon loves strawberries", 18: "Sheldon the tortoise slept all day"}
        said = text.get(n, "the tortoise ate" if n == 19 else f"Filler remark number {n} about the weather")
        request = {
            "session_uuid": "s1",
            "parent_session_uuid": "thread-1",
            "new_dialog": {"uuid": f"d{n}", "query": said, "answer": ""},
        }
        consolidate.run(engine, TENANT, ConsolidateRequest.model_validate(request))
    run_worker(engine)
    return engine


@pytest.mark.parametrize("power", [1.0, 2.0])
def test_a_replayed_question_ranks_as_the_engine_does_at_its_share_power(
    engine: Engine, power: float
) -> None:
    engine = replace(engine, retrieval=replace(engine.retrieval, memory_share_power=power))
    with forming_tune.Recorder() as recorder:
        captured = recorder.question(engine, QUESTION)
    full = tune.collect(engine, [QUESTION])[0]

    assert captured.buffered and captured.raw_memories and 0.0 < captured.share < 1.0
    memories = forming_tune.side_share(power)(captured)
    assert memories == full.gathered.memories
    assert forming_tune._ranking(captured, memories) == tune.ranking(full, captured.weights)


def test_the_recorder_puts_the_engine_back_as_it_was(engine: Engine) -> None:
    from memory_engine.usecases import retrieve

    before = (retrieve.memory_candidates, retrieve.memory_lexical_share)
    with forming_tune.Recorder() as recorder:
        recorder.question(engine, QUESTION)
    assert (retrieve.memory_candidates, retrieve.memory_lexical_share) == before
