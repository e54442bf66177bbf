"""The forming power replay: captures of some conversations join, and the target is judged as a
recorded forming run judges it."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.experiments import forming_power
from bench.quality.locomo import forming, forming_tune

NAMES = [state.name for state in forming.STATES]


def test_captures_of_disjoint_conversations_replay_as_one(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _write(first, NAMES[1], ["q1", "q2"])
    _write(second, NAMES[1], ["q3"])
    _write(first, NAMES[2], ["q1"])

    states = forming_power.load_states(first, second)

    # A state captured in one folder only would compare other questions: it is left out.
    assert states == {NAMES[1]: ["q1", "q2", "q3"]}


def test_samples_pick_conversations_by_id_and_an_unknown_one_is_named() -> None:
    conversations = [_Conversation("conv-26"), _Conversation("conv-30"), _Conversation("conv-41")]
    assert forming_power.choose(conversations, ["conv-41", "conv-26"]) == [conversations[2], conversations[0]]
    assert forming_power.choose(conversations, []) == conversations
    with pytest.raises(SystemExit, match="conv-99"):
        forming_power.choose(conversations, ["conv-99"])


def test_the_verdict_judges_the_worst_state_against_the_lower_end_minus_the_tolerance() -> None:
    table = {name: {"all": 0.8} for name in NAMES}
    table[forming.ALL_EXTRACTED] = {"all": 0.79}
    table[NAMES[1]] = {"all": 0.771}
    assert forming_power.verdict(table) == [f"all: worst 0.771 ({NAMES[1]}) against floor 0.770: met"]
    table[NAMES[1]] = {"all": 0.769}
    assert forming_power.verdict(table)[0].endswith("MISSED")


def test_the_verdict_is_per_split_and_needs_both_ends() -> None:
    table = {name: {"all": 0.8, "conv-26": 0.8, "conv-42": 0.8} for name in NAMES}
    table[NAMES[2]] = {"all": 0.8, "conv-26": 0.8, "conv-42": 0.7}
    lines = forming_power.verdict(table)
    assert [line.split(":")[0] for line in lines] == ["all", "chosen on", "checked on"]
    assert lines[1].endswith("met") and lines[2].endswith("MISSED")
    del table[forming.ALL_BUFFERED]
    assert forming_power.verdict(table) == []


def test_the_second_knob_changes_only_the_named_features_weight() -> None:
    weights = forming_power.with_weight("memory_dense", 0.1)
    assert weights == {**forming_power.DEFAULT_WEIGHTS, "memory_dense": 0.1}
    with pytest.raises(SystemExit, match="memroy"):
        forming_power.with_weight("memroy", 0.1)


@dataclass
class _Conversation:
    sample_id: str


def _write(folder: Path, state: str, captured: list[str]) -> None:
    folder.mkdir(exist_ok=True)
    with (folder / f"{forming_tune._slug(state)}.pkl").open("wb") as file:
        pickle.dump(captured, file)
