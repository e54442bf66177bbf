"""A Korean question is ranked by the embedder's cosines; an English one keeps its BM25 terms."""

from __future__ import annotations

import pytest

from memory_engine.engine import Engine
from memory_engine.models.api import ConsolidateRequest, RetrieveRequest
from memory_engine.retrieval.config import DEFAULT_WEIGHTS, RetrievalConfig
from memory_engine.retrieval.fusion import with_lexical_share
from memory_engine.usecases import consolidate, retrieve
from tests.fakes.engine import fake_engine, run_worker

TENANT = "acme"
LINES = [
    "수빈이는 고수를 정말 싫어해",
    "Subin hates coriander",
    "지훈이는 기타를 배워",
    "Jihoon learns guitar",
]


def test_a_korean_question_gets_the_korean_lexical_share_and_an_english_one_the_default() -> None:
    config = RetrievalConfig(korean_lexical_share=0.5)

    assert config.weights_for("수빈이가 싫어하는 채소는?") == with_lexical_share(DEFAULT_WEIGHTS, 0.5)
    assert config.weights_for("Which vegetable does Subin hate?") == DEFAULT_WEIGHTS


@pytest.fixture
def engine() -> Engine:
    # Given a thread whose 24 turns, Korean and English, are extracted into memories
    engine = fake_engine()
    for n in range(24):
        request = ConsolidateRequest.model_validate(
            {
                "session_uuid": "s1",
                "parent_session_uuid": "thread-1",
                "new_dialog": {"uuid": f"d{n}", "query": LINES[n % 4], "answer": ""},
                "user_name": "수빈",
            }
        )
        consolidate.run(engine, TENANT, request)
    run_worker(engine)
    return engine


def _parts(engine: Engine, query: str) -> list[dict[str, float]]:
    request = RetrieveRequest.model_validate(
        {"parent_session_uuids": ["thread-1"], "user_input": {"query": query}, "options": {"explain": True}}
    )
    hits = retrieve.run(engine, TENANT, request).data
    assert hits, "the thread has memories to find"
    return [hit.score_parts or {} for hit in hits]


def test_a_korean_question_is_ranked_without_the_lexical_terms(engine: Engine) -> None:
    parts = _parts(engine, "수빈이는 고수를 싫어해?")

    assert all(part.get("lexical", 0.0) == 0.0 and part.get("memory", 0.0) == 0.0 for part in parts)
    assert all(part["dense"] != 0.0 for part in parts)


def test_an_english_question_keeps_the_lexical_terms(engine: Engine) -> None:
    parts = _parts(engine, "does Subin hate coriander?")

    assert any(part.get("lexical", 0.0) > 0.0 for part in parts)
    assert any(part.get("memory", 0.0) > 0.0 for part in parts)
