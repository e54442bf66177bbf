"""The labelled extraction set loads whole, the scorer counts what it says, and a recorded run
(another extractor's outputs) is scored exactly like a live one."""

from __future__ import annotations

import json
from pathlib import Path

from bench.extraction.data import load
from bench.extraction.score import location_items, score_memory
from bench.extraction_quality import main
from memory_engine.models.domain import MemoryFields

SET = load()


def test_the_set_holds_three_english_and_three_korean_conversations_and_two_held_out() -> None:
    assert sorted(c.language for c in SET if c.split == "dev") == ["en", "en", "en", "ko", "ko", "ko"]
    assert sorted(c.language for c in SET if c.split == "held-out") == ["en", "ko"]
    assert all(len(c.turns) == 24 and len(c.memories) == 3 for c in SET)
    assert all(m.characters and m.key_facts and m.keywords for c in SET for m in c.memories)


def test_each_field_counts_right_of_produced_and_found_of_expected() -> None:
    # Given one labelled memory and an answer with one right and one wrong item per field
    conversation = SET[0]
    expected = conversation.memories[0]
    fields = MemoryFields(
        summary="",
        characters=["Maya", "Fine"],
        keywords=["Sheldon", "th"],
        key_facts=["Maya: My dog Biscuit is a beagle.", "assistant: Sheldon has refined taste."],
        intent='Maya expresses a wish or plan: "I\'ll feed Sheldon in the bedroom." It is about cats.',
        location="Place: bedroom, keyboards. Date: 2025-03-14.",
    )

    # When it is scored
    score = score_memory("x", fields, expected, conversation.vocabulary)

    # Then every field has one right of two produced, found out of all expected
    for name in ("characters", "keywords", "key_facts", "intent", "location"):
        tally = score.tallies[name]
        assert (tally.right, tally.produced) == (1, 2), name
        assert tally.found >= 1 and tally.expected >= tally.found, name
    assert score.wrong["characters"] == ["Fine"]
    assert score.wrong["keywords"] == ["th"]


def test_a_date_taken_from_the_timestamps_is_neither_right_nor_wrong() -> None:
    assert location_items("장소: 공원, 동물병원. 날짜: 2025-04-10 ~ 2025-04-11.") == ["공원", "동물병원"]


def test_a_recorded_run_scores_like_the_live_run_and_both_columns_are_kept(tmp_path: Path) -> None:
    # Given the built-in extractor's run recorded to a file
    recorded, results = tmp_path / "outputs.json", tmp_path / "results.json"
    live = main(["--record", str(recorded), "--results", str(results), "--label", "live"])

    # When the recording is scored as another extractor's outputs
    again = main(["--extractor", f"recorded:{recorded}", "--label", "replayed", "--results", str(results)])

    # Then the scores are identical and the results file holds both columns
    assert again["columns"]["replayed"]["scores"] == live["columns"]["live"]["scores"]
    assert set(json.loads(results.read_text(encoding="utf-8"))["columns"]) == {"live", "replayed"}
