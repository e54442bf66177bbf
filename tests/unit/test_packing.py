"""Packing hits into a token budget, and the core's token counter (pure)."""

from __future__ import annotations

from memory_engine.models.api import RetrievedMemory, TurnEvidence
from memory_engine.retrieval.packing import pack
from memory_engine.retrieval.tokens import count_tokens


def _memory(memory_id: str, content: str, turns: list[str]) -> RetrievedMemory:
    evidence = [
        TurnEvidence(dialog_uuid=f"{memory_id}-{i}", score=1.0 - i / 10, text=t) for i, t in enumerate(turns)
    ]
    return RetrievedMemory(
        memory_id=memory_id,
        content=content,
        score=1.0,
        kind="memory",
        session_uuid="s",
        source_dialog_uuids=[e.dialog_uuid for e in evidence],
        evidence=evidence,
    )


def test_the_token_counter_counts_words_marks_and_korean_syllable_pairs() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("internationalisation") == 3  # 20 letters: 8 + 8 + 4
    assert count_tokens("yes, ok!") == 4
    assert count_tokens("고양이를") == 2
    assert count_tokens("a\nb") == count_tokens("a") + count_tokens("b")


def test_hits_that_fit_go_in_whole_in_rank_order() -> None:
    hits = [_memory("m1", "one two three", ["x"]), _memory("m2", "four five", ["y"])]

    packed, used = pack(hits, 10)

    assert [hit.memory_id for hit in packed] == ["m1", "m2"]
    assert not any(hit.truncated for hit in packed)
    assert used == 5


def test_a_memory_too_long_is_cut_to_its_best_whole_turns() -> None:
    # Given a 12-word memory whose matched turns cost 4, 5 and 3 tokens, and a budget of 7
    hit = _memory("m1", " ".join(["word"] * 12), ["Ana: tortoise Sheldon", "Ben: that is great", "Ana: yes"])

    packed, used = pack([hit], 7)

    # Then the best turn goes in, the second does not fit whole, the third does
    assert packed[0].truncated
    assert [e.text for e in packed[0].evidence] == ["Ana: tortoise Sheldon", "Ana: yes"]
    assert packed[0].content == "Ana: tortoise Sheldon\nAna: yes"
    assert used == count_tokens(packed[0].content) == 7


def test_a_hit_with_nothing_that_fits_is_skipped_for_a_smaller_one() -> None:
    hits = [_memory("m1", "a b c d e f g h", ["a b c d e f"]), _memory("m2", "short", ["short"])]

    packed, used = pack(hits, 3)

    assert [hit.memory_id for hit in packed] == ["m2"]
    assert used == 1


def test_the_budget_is_never_exceeded() -> None:
    hits = [_memory(f"m{i}", " ".join(["w"] * (i + 3)), ["w w", "w w w"]) for i in range(8)]
    for budget in range(1, 40):
        packed, used = pack(hits, budget)
        assert used == sum(count_tokens(hit.content) for hit in packed) <= budget
