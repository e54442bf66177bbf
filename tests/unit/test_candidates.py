"""Merging dense and lexical candidates (`retrieval.candidates`), on hand-made scores."""

from __future__ import annotations

from memory_engine.retrieval.candidates import Scored, merge, unscored


def test_dense_candidates_come_first_in_their_order_then_the_lexical_only_ones() -> None:
    # Given dense and lexical candidates, "b" found by both
    dense = {"a": 0.9, "b": 0.7}
    lexical = {"c": 5.0, "b": 3.0, "d": 1.0}

    # When merged
    merged = merge(dense, lexical)

    # Then the dense ones lead, best first, then those only the words found, best first
    assert [hit.doc_id for hit in merged] == ["a", "b", "c", "d"]
    assert merged[1] == Scored("b", 0.7, 3.0)


def test_a_candidate_gets_the_other_retrievers_score_when_it_was_computed_and_zero_otherwise() -> None:
    # Given a dense-only "a" whose BM25 was looked up, and a lexical-only "c" whose cosine was
    merged = merge({"a": 0.9, "z": 0.1}, {"c": 5.0}, dense_of={"c": 0.4}, lexical_of={"a": 2.0})

    # Then each has both scores; "z", sharing no word with the query, has 0 BM25
    assert merged == [Scored("a", 0.9, 2.0), Scored("z", 0.1, 0.0), Scored("c", 0.4, 5.0)]


def test_the_score_a_retriever_returned_wins_over_a_looked_up_one() -> None:
    assert merge({"a": 0.9}, {"a": 3.0}, lexical_of={"a": 1.0}) == [Scored("a", 0.9, 3.0)]


def test_unscored_names_the_candidates_the_other_retriever_missed_in_order() -> None:
    assert unscored({"a": 0.9, "b": 0.7, "c": 0.5}, {"b": 3.0}) == ["a", "c"]
