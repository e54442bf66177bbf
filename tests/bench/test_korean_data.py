"""The project's own Korean dialogue set (and its English translation) is well-formed LoCoMo data.

No benchmark figures here: only that the harness can read the files and every question is scorable.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.quality.locomo.data import load

FOLDER = Path(__file__).resolve().parents[2] / "bench" / "data" / "korean"
KOREAN = FOLDER / "korean-dialogues.json"
ENGLISH = FOLDER / "english-dialogues.json"
FILES = [KOREAN, ENGLISH]


def _raw(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _dia_ids(sample: dict[str, Any]) -> list[str]:
    conversation = sample["conversation"]
    return [
        turn["dia_id"]
        for key, turns in conversation.items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_harness_reads_every_session_and_scores_every_question(path: Path) -> None:
    # Given the file as written
    raw = _raw(path)

    # When the harness's reader loads it
    conversations = load(path)

    # Then no session and no question is dropped on the way
    assert len(conversations) == len(raw) >= 2
    for conversation, sample in zip(conversations, raw, strict=True):
        assert [turn.dia_id for turn in conversation.turns] == _dia_ids(sample)
        assert len(conversation.questions) == len(sample["qa"])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_question_has_evidence_that_exists_in_its_conversation(path: Path) -> None:
    for sample in _raw(path):
        known = set(_dia_ids(sample))
        assert len(known) == len(_dia_ids(sample)), f"{sample['sample_id']}: a dia_id is repeated"
        for qa in sample["qa"]:
            assert qa["evidence"], f"{sample['sample_id']}: {qa['question']!r} has no evidence"
            missing = [dia_id for dia_id in qa["evidence"] if dia_id not in known]
            assert not missing, f"{sample['sample_id']}: {qa['question']!r} cites unknown {missing}"
            assert qa["answer"], f"{sample['sample_id']}: {qa['question']!r} has no answer"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_questions_are_not_copied_from_their_evidence(path: Path) -> None:
    # Paraphrased questions are the point of the set: none may be a turn's text verbatim
    for sample in _raw(path):
        texts = {
            turn["dia_id"]: turn["text"]
            for key, turns in sample["conversation"].items()
            if key.startswith("session_") and isinstance(turns, list)
            for turn in turns
        }
        for qa in sample["qa"]:
            question = qa["question"].rstrip("?？ ")
            assert all(question not in texts[dia_id] for dia_id in qa["evidence"]), qa["question"]


def test_the_korean_set_meets_its_size_and_mix() -> None:
    # Given the Korean set
    conversations = load(KOREAN)
    questions = [q for c in conversations for q in c.questions]
    categories = Counter(q.category for q in questions)

    # Then it is big enough to measure and mixes every kind of question
    assert sum(len(c.turns) for c in conversations) >= 240
    assert sum(len(c.sessions) for c in conversations) >= 10
    assert len(questions) >= 70
    assert set(categories) == {1, 2, 3, 4}
    assert categories[4] >= 0.3 * len(questions)
    assert min(categories[1], categories[2]) >= 0.2 * len(questions)
    # and each conversation's sessions span several months
    for conversation in conversations:
        months = {(s.date.year, s.date.month) for s in conversation.sessions}
        assert len(months) >= 4, conversation.sample_id
        assert [s.date for s in conversation.sessions] == sorted(s.date for s in conversation.sessions)


def test_the_english_translation_asks_the_same_questions_of_the_same_turns() -> None:
    # Given both files
    korean, english = _raw(KOREAN), _raw(ENGLISH)

    # Then they align sample by sample: same ids, sessions, dates, evidence and categories
    assert [s["sample_id"] for s in korean] == [s["sample_id"] for s in english]
    for ko, en in zip(korean, english, strict=True):
        assert _dia_ids(ko) == _dia_ids(en)
        dates = [k for k in ko["conversation"] if k.endswith("_date_time")]
        assert all(ko["conversation"][k] == en["conversation"][k] for k in dates)
        pairs = zip(ko["qa"], en["qa"], strict=True)
        assert all(k["evidence"] == e["evidence"] and k["category"] == e["category"] for k, e in pairs)
