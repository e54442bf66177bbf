"""A buffered turn scored by its batch's BM25 (bench/experiments/forming_batches.py): the batches cut
as extraction would cut them, and the replayed feature where a question has both sides."""

from __future__ import annotations

from datetime import UTC, datetime

from bench.experiments import forming_batches, forming_loss
from bench.quality.locomo.data import Conversation, Question, Session, Turn
from tests.bench.test_forming_loss import BUFFERED, _captured

MIDDLE = "first 50% of sessions extracted"


def _conversation(turns_per_session: int = 10) -> Conversation:
    """conv-1: session 1 about work, session 3 about a dog named Biscuit in its last turns."""
    lines = {1: "I work at the bank", 2: "we talked about the weather", 3: "my dog Biscuit loves the park"}
    sessions = tuple(
        Session(
            number,
            datetime(2023, 5, number, tzinfo=UTC),
            tuple(
                Turn(f"D{number}:{n}", "Ann", lines[number] if n > 8 else "hello there", number)
                for n in range(1, turns_per_session + 1)
            ),
        )
        for number in (1, 2, 3)
    )
    return Conversation("conv-1", sessions, ())


def test_the_buffered_sessions_are_cut_into_batches_of_the_extraction_size() -> None:
    batches = forming_batches.Batches(_conversation(), extracted=2, size=8)

    # Session 3's ten turns: D3:1..8 in its first batch, D3:9..10 in its second; sessions 1-2 extracted.
    assert list(batches.docs) == ["S3:0", "S3:1"]
    assert batches.of["D3:1"] == batches.of["D3:8"] == "S3:0"
    assert batches.of["D3:9"] == "S3:1"
    assert "D1:1" not in batches.of


def test_a_batch_is_scored_over_the_best_batch_and_a_batch_without_the_words_scores_nothing() -> None:
    batches = forming_batches.Batches(_conversation(), extracted=1, size=8)

    scores = batches.scores("Where does the dog Biscuit play?")

    assert scores["S3:1"] == 1.0
    assert "S2:0" not in scores and "S3:0" not in scores


def test_a_buffered_turn_takes_its_batchs_score_while_forming_and_an_end_ranks_as_shipped() -> None:
    # Given the buffered turn D3:1, whose batch (D3:1..8) is the only one matching the question
    conversation = _conversation()
    batches = {("conv-1", MIDDLE): forming_batches.Batches(conversation, extracted=2, size=8)}
    question = Question("conv-1", 0, 1, "who says hello there?", ("D3:1",), (3,))
    item = _captured(memory_cosine=0.45, buffered_cosine=0.5, memory_bm25=1.0, question=question)
    assert forming_loss.shipped()(item).units[0].memory_id == "m1"

    # When it is ranked with its batch's BM25 as its own document's (the side's share to the power 0)
    ranked = forming_batches.ranker(batches, power=0.0, everywhere=False)(item, MIDDLE)

    # Then the batch's full match puts it ahead of the memory, as the memory's document put m1 ahead
    assert ranked.units[0].key == BUFFERED
    assert ranked.units[0].parts["memory"] > 0
    # And a question with nothing extracted (an end) is ranked as shipped unless asked everywhere
    alone = _captured(memory_cosine=0.5, buffered_cosine=None, question=question)
    assert forming_batches.ranker(batches, 0.0, everywhere=False)(alone, MIDDLE).units == (
        forming_loss.shipped()(alone).units
    )
