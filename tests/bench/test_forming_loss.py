"""The forming loss diagnosis and re-scorings: where a question's answer is, why it left the first ten
places, and the ranking changes replayed over captured candidates."""

from __future__ import annotations

from bench.experiments import forming_loss, tables
from bench.quality.locomo import forming
from bench.quality.locomo.data import Question
from bench.quality.locomo.forming_tune import Captured
from memory_engine.retrieval.config import DEFAULT_WEIGHTS
from memory_engine.retrieval.features import TurnCandidate

# A memory of eight turns D1:1..D1:8 and a buffered turn D3:1 of the third session (its key `BUFFERED`).
MEMORY_DIALOGS = tuple(f"D1:{n}" for n in range(1, 9))
BUFFERED = "turn:conv-1:S3:D3:1"


def test_a_question_is_on_the_side_of_its_gold_turns_sessions() -> None:
    assert forming_loss.side(["D1:3", "D2:1"], extracted=2) == "memories"
    assert forming_loss.side(["D3:1"], extracted=2) == "buffered"
    assert forming_loss.side(["D2:5", "D3:1"], extracted=2) == "both"


def test_a_memory_places_its_matched_turn_first_then_its_others_and_a_buffered_turn_one_place() -> None:
    item = _captured(memory_cosine=0.6, buffered_cosine=0.5, matched=3)

    scored = forming_loss.shipped()(item)

    assert [dialog for dialog, _ in scored.places] == [
        "D1:4",
        *MEMORY_DIALOGS[:3],
        *MEMORY_DIALOGS[4:],
        "D3:1",
    ]
    assert dict(scored.places)["D3:1"] == BUFFERED


def test_a_buffered_answer_behind_a_memory_that_fills_the_places_is_diagnosed_with_the_parts_gap() -> None:
    # Given the answer D3:1 buffered in the middle state behind two memories, first at both ends
    question = _question(["D3:1"])
    middle = _captured(memory_cosine=0.6, buffered_cosine=0.5, question=question, second_memory=0.58)
    ends = _captured(memory_cosine=0.0, buffered_cosine=0.5, question=question)
    states = {forming.ALL_BUFFERED: [ends], forming.STATES[3].name: [middle], forming.ALL_EXTRACTED: [ends]}

    # When the middle state is diagnosed (3 sessions: 75 % extracted is the first 2)
    found = forming_loss.diagnose(states, forming.STATES[3].name, {"conv-1": 3}, forming_loss.shipped())

    # Then it is one buffered question below both ends, and the memory's turn cosine is the gap
    assert found["by_side"]["buffered"]["below_both_ends"] == 1
    assert found["missed_gold_turns_by_cause"] == {"buffered answer: memories took the first ten places": 1}
    gap = found["mean_part_gap_memory_ahead_of_buffered_gold"]
    assert gap["dense"] + gap["window"] > 0
    assert found["memory_places_in_first_10"] == 1.0


def test_the_best_buffered_turn_moves_up_to_its_place_only_past_memories() -> None:
    item = _captured(memory_cosine=0.6, buffered_cosine=0.5)
    assert forming_loss.shipped()(item).units[0].memory_id == "m1"

    moved = forming_loss.buffered_by(1)(item)

    assert moved.places[0] == ("D3:1", BUFFERED)
    # Already ahead, or nothing buffered: the shipped order.
    assert forming_loss.buffered_by(2)(item).units[0].memory_id == "m1"
    alone = _captured(memory_cosine=0.6, buffered_cosine=None)
    assert forming_loss.buffered_by(1)(alone).units == forming_loss.shipped()(alone).units


def test_memory_places_cost_lowers_a_memory_after_memories_filled_places() -> None:
    # Given two memories ahead of a buffered turn by less than the cost of the first one's places
    item = _captured(memory_cosine=0.6, buffered_cosine=0.55, second_memory=0.58)
    assert [unit.key for unit in forming_loss.shipped()(item).units] == ["m1", "m2", BUFFERED]

    # When each memory's score is lowered by the places memories already fill
    ranked = forming_loss.memory_places(0.1)(item).units

    # Then the first memory keeps its place and the buffered turn passes the second
    assert [unit.key for unit in ranked] == ["m1", BUFFERED, "m2"]


def test_own_cosines_folds_a_memory_turns_window_into_its_own_only_while_something_is_buffered() -> None:
    item = _captured(memory_cosine=0.6, buffered_cosine=0.5)
    turns = forming_loss._own_cosines(item)
    memory_turn = next(turn for turn in turns if turn.memory_id == "m1")
    assert memory_turn.features["window"] == 0.0
    assert memory_turn.features["dense"] == 0.6  # its own cosine: 0.5 × 0.6 as captured, over 0.5
    alone = _captured(memory_cosine=0.6, buffered_cosine=None)
    assert forming_loss._own_cosines(alone) == alone.turns


def _question(gold: list[str]) -> Question:
    return Question("conv-1", 0, 1, "what?", tuple(gold), ())


def _captured(
    memory_cosine: float,
    buffered_cosine: float | None,
    matched: int = 0,
    question: Question | None = None,
    second_memory: float | None = None,
    memory_bm25: float = 0.0,
) -> Captured:
    """One question's candidates: memory m1 (its turn `matched` with own cosine and window
    `memory_cosine`; its document with raw BM25 `memory_bm25`, the best), optionally m2, and a
    buffered turn D3:1 with `buffered_cosine`."""

    def memory_turn(memory_id: str, cosine: float) -> TurnCandidate:
        features = {
            "dense": 0.5 * cosine,
            "window": 0.5 * cosine,
            "lexical": 0.0,
            "date": 0.0,
            "speaker": 0.0,
        }
        return TurnCandidate(f"{memory_id}:turn:{matched}", memory_id, features)

    turns = [memory_turn("m1", memory_cosine)]
    dialogs = {"m1": MEMORY_DIALOGS}
    if second_memory is not None:
        turns.append(memory_turn("m2", second_memory))
        dialogs["m2"] = tuple(f"D1:{n}" for n in range(9, 17))
    buffered = {}
    if buffered_cosine is not None:
        features = {
            "dense": buffered_cosine,
            "window": 0.0,
            "lexical": 0.0,
            "date": 0.0,
            "speaker": 0.0,
            "memory": 0.0,
            "memory_dense": 0.0,
        }
        turns.append(TurnCandidate(BUFFERED, None, features))
        buffered[BUFFERED] = "D3:1"
    return Captured(
        question=question or _question(["D1:1"]),
        raw_memories=[("m1", 0.0, memory_bm25)] if memory_bm25 else [],
        share=1.0,
        turns=turns,
        buffered=buffered,
        dialogs=dialogs,
        weights=dict(DEFAULT_WEIGHTS),
    )


def test_the_saved_record_diagnoses_each_middle_state_captured_and_keeps_every_variants_table() -> None:
    question = _question(["D3:1"])
    item = _captured(memory_cosine=0.6, buffered_cosine=0.5, question=question)
    middle = forming.STATES[2].name
    states = {forming.ALL_BUFFERED: [item], middle: [item], forming.ALL_EXTRACTED: [item]}
    judged = forming_loss.judge(states, {"shipped": forming_loss.shipped()})

    saved = forming_loss.record(states, judged, "gemma", sessions={"conv-1": 3})

    assert saved["conversations"] == ["conv-1"]
    assert list(saved["diagnosis"]) == [middle]
    assert saved["variants"]["shipped"]["recall_10"][middle]["all"] == 1.0
    assert saved["variants"]["shipped"]["verdict"] == [
        f"all: worst 1.000 ({forming.ALL_BUFFERED}) against floor 0.980: met"
    ]


def test_a_weight_while_forming_changes_a_middle_state_only() -> None:
    # Given a memory whose document BM25 alone puts it ahead of a buffered turn
    item = _captured(memory_cosine=0.5, buffered_cosine=0.55, memory_bm25=1.0)
    assert forming_loss.shipped()(item).units[0].memory_id == "m1"

    # When the memory documents' BM25 weighs nothing while forming, the buffered turn comes first
    assert forming_loss.while_forming("memory", 0.0)(item).units[0].key == BUFFERED
    # And with nothing buffered (an end), the weights are the shipped ones
    alone = _captured(memory_cosine=0.5, buffered_cosine=None, memory_bm25=1.0)
    assert forming_loss.while_forming("memory", 0.0)(alone).units == forming_loss.shipped()(alone).units


def test_with_one_end_captured_the_diagnosis_compares_with_that_end_and_says_so() -> None:
    question = _question(["D3:1"])
    middle = _captured(memory_cosine=0.6, buffered_cosine=0.5, question=question, second_memory=0.58)
    end = _captured(memory_cosine=0.0, buffered_cosine=0.5, question=question)
    states = {forming.ALL_BUFFERED: [end], forming.STATES[1].name: [middle]}

    found = forming_loss.diagnose(states, forming.STATES[1].name, {"conv-1": 3})

    assert found["ends"] == [forming.ALL_BUFFERED]
    assert found["by_side"]["buffered"]["below_both_ends"] == 1
    assert found["by_side"]["buffered"][f"{forming.ALL_BUFFERED} recall_10"] == 1.0


def test_the_docs_table_has_a_row_per_ranking_and_the_diagnosis_by_side() -> None:
    question = _question(["D3:1"])
    item = _captured(memory_cosine=0.6, buffered_cosine=0.5, question=question)
    states = {forming.ALL_BUFFERED: [item], forming.STATES[1].name: [item]}
    judged = forming_loss.judge(states, {"shipped": forming_loss.shipped()})

    lines = tables.forming_loss(forming_loss.record(states, judged, "gemma", sessions={"conv-1": 3}))

    assert lines[0] == f"| ranking | {forming.ALL_BUFFERED} | {forming.STATES[1].name} | target |"
    assert lines[2] == "| shipped | 1.000 | 1.000 | — |"
    assert any(line.startswith("| buffered | 1 | 1.000 | 1.000 | 0 |") for line in lines)


def test_a_buffered_turns_document_bm25_goes_on_the_memory_documents_scale_and_nothing_else_moves() -> None:
    # Given a memory side holding the pool's best BM25 and a buffered turn at 0.5 of it, the best buffered
    item = _captured(memory_cosine=0.5, buffered_cosine=0.5, memory_bm25=1.0)
    buffered = next(turn for turn in item.turns if turn.key == BUFFERED)
    features = {**buffered.features, "lexical": 0.5, "memory": 0.5}
    turns = [turn if turn.key != BUFFERED else turn._replace(features=features) for turn in item.turns]
    item = Captured(**{**item.__dict__, "turns": turns})
    assert forming_loss.buffered_side_share(item) == 0.5

    # When its document BM25 is over the best buffered turn's × the buffered side's share ^ power
    def memory_feature(power: float) -> float:
        found = forming_loss._buffered_document(item, forming_loss.memory_side_scale(power))
        return next(turn.features["memory"] for turn in found if turn.key == BUFFERED)

    # Then power 1 is the shipped pool scale, 0 counts the best buffered turn 1, 2 its share squared
    assert memory_feature(1.0) == 0.5
    assert memory_feature(0.0) == 1.0
    assert memory_feature(2.0) == 0.25
    same = forming_loss.buffered_documents(forming_loss.memory_side_scale(1.0))
    assert same(item) == forming_loss.shipped()(item)
    # And where a buffered turn holds the pool's best (the memory side's share under 1) the side counts 1
    below = Captured(**{**item.__dict__, "share": 0.8})
    assert forming_loss.buffered_side_share(below) == 1.0
