"""The LoCoMo harness end to end on a small synthetic conversation in LoCoMo's format.

Three sessions (22, 9 and 10 turns) between Ana and Ben, a few facts among filler, questions with
evidence; the hashed bag-of-words embedder stands in for MiniLM so no model loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.quality.locomo.variants import DEFAULT_NAME, FORCED_NAME, UNCLOSED_NAME, VARIANTS
from bench.quality.locomo_retrieval import BM25_NAME, DENSE_NAME, FUSION_NAME, main
from memory_engine.retrieval.text import tokenize
from tests.fakes.ports import HashEmbedder


class TermEmbedder(HashEmbedder):
    """Hashed bag of the analyzer's terms (stop words out, stems in): its cosine follows topic words,
    as a real model's does, where raw words let "what", "did" and names decide with the fusion's
    dense-heavy default weights."""

    def _one(self, text: str) -> list[float]:
        return super()._one(" ".join(tokenize(text)))


FACTS = {
    (1, 5): ("Ana", "My tortoise is called Sheldon and he loves strawberries."),
    (1, 19): ("Ben", "I finally ran the Lisbon marathon last Sunday."),
    (2, 4): ("Ana", "I started pottery classes, my first bowl came out wobbly."),
    (3, 7): ("Ben", "We adopted a border collie puppy named Pixel."),
}
QUESTIONS = [
    ("What is the name of Ana's tortoise?", ["D1:5"], 4),
    ("Which marathon did Ben run?", ["D1:19"], 2),
    ("What classes did Ana start?", ["D2:4"], 4),
    ("What did Ben and Ana talk about? Pottery and a marathon", ["D2:4", "D1:19"], 1),
    ("What is the name of Ben's puppy?", ["D3:7"], 4),
    ("What is the name of Ben's tortoise?", ["D1:5"], 5),
]
SESSION_TURNS = {1: 22, 2: 9, 3: 10}
DATES = {1: "1:56 pm on 8 May, 2023", 2: "10:04 am on 20 May, 2023", 3: "7:30 pm on 2 June, 2023"}


def _conversation() -> dict[str, Any]:
    conversation: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for session, count in SESSION_TURNS.items():
        turns = []
        for number in range(1, count + 1):
            filler = f"Filler remark {session}-{number} about the weather today."
            speaker, text = FACTS.get((session, number), ("Ana" if number % 2 else "Ben", filler))
            turns.append({"speaker": speaker, "dia_id": f"D{session}:{number}", "text": text})
        turns[1]["blip_caption"] = "a photo of a cloudy sky"
        conversation[f"session_{session}"] = turns
        conversation[f"session_{session}_date_time"] = DATES[session]
    qa = [{"question": q, "answer": "-", "evidence": e, "category": c} for q, e, c in QUESTIONS]
    return {"sample_id": "synthetic-1", "conversation": conversation, "qa": qa}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("locomo")
    data = folder / "synthetic.json"
    data.write_text(json.dumps([_conversation()]), encoding="utf-8")
    argv = ["--data", str(data), "--out", str(folder / "run.jsonl"), "--no-plot", "--quiet"]
    outcome = main([*argv, "--results", str(folder / "results.json")], embedder=TermEmbedder(256))
    return {"folder": folder, **outcome}


def test_the_run_file_has_one_ranking_per_question_covering_every_turn(run: dict[str, Any]) -> None:
    # Given the run over 41 turns and 6 questions
    lines = (run["folder"] / "run.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]

    # Then each question has a line with every turn ranked once (fewer than 50 exist)
    assert [(row["sample_id"], row["qa_index"]) for row in rows] == [("synthetic-1", i) for i in range(6)]
    for row in rows:
        assert len(row["ranked"]) == len(set(row["ranked"])) == sum(SESSION_TURNS.values())


def test_the_engine_finds_a_stated_fact_within_the_first_ten_turns(run: dict[str, Any]) -> None:
    ranked = run["runs"][DEFAULT_NAME][("synthetic-1", 0)]

    assert "D1:5" in ranked[:10]


def test_by_default_the_next_session_closes_the_earlier_one_into_a_memory(run: dict[str, Any]) -> None:
    # Given session 2 (9 turns) never reached the extraction threshold, and session 3 followed it
    ranked = run["runs"][DEFAULT_NAME][("synthetic-1", 2)]

    # Then its pottery turn comes back first, with the rest of its batch (D2:1-D2:8) after it
    assert ranked[0] == "D2:4"
    assert sorted(ranked[:8]) == sorted(f"D2:{n}" for n in range(1, 9))


def of_session(ranked: list[str], session: int) -> list[str]:
    return [dia_id for dia_id in ranked if dia_id.startswith(f"D{session}:")]


def test_by_default_the_last_sessions_leftover_turns_rank_on_their_own(run: dict[str, Any]) -> None:
    # Given session 3 (10 turns) is the last one: nothing closed it, its turns stay raw
    ranked = run["runs"][DEFAULT_NAME][("synthetic-1", 4)]

    # Then the puppy turn comes first of its session, not in a batch in source order
    assert of_session(ranked, 3)[0] == "D3:7"


def test_a_client_force_at_each_sessions_end_puts_every_turn_in_a_memory(run: dict[str, Any]) -> None:
    ranked = run["runs"][FORCED_NAME][("synthetic-1", 4)]

    # The puppy turn leads its memory's batch (its evidence), the batch's other turns follow
    assert of_session(ranked, 3)[0] == "D3:7"
    assert sorted(of_session(ranked, 3)[:8]) == sorted(f"D3:{n}" for n in range(1, 9))


def test_without_closing_a_short_sessions_turns_stay_raw(run: dict[str, Any]) -> None:
    # Given session 2 (9 turns) was never closed: the pottery question finds its turn on its own
    ranked = run["runs"][UNCLOSED_NAME][("synthetic-1", 2)]

    assert of_session(ranked, 2)[0] == "D2:4"


def test_results_hold_the_engine_the_baselines_and_every_variant_per_category(run: dict[str, Any]) -> None:
    payload = json.loads((run["folder"] / "results.json").read_text())

    baselines = {BM25_NAME, DENSE_NAME, FUSION_NAME}
    assert {DEFAULT_NAME, *baselines} | {v.name for v in VARIANTS} == set(payload["systems"])
    engine = payload["systems"][DEFAULT_NAME]
    assert engine["all"]["questions"] == 5
    assert engine["5"]["questions"] == 1
    assert set(engine) == {"all", "1", "2", "4", "5"}
    assert len(payload["recall_curves"][BM25_NAME]["all"]) == 50


def test_the_plot_is_written(run: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from bench.quality.locomo.plot import draw

    target = tmp_path / "curves.png"
    draw(target, run["systems"], [DEFAULT_NAME, BM25_NAME, DENSE_NAME], "synthetic")

    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
