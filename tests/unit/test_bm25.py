"""Okapi BM25 as Lucene/OpenSearch computes it, over an incremental inverted index."""

from __future__ import annotations

import math

import pytest

from memory_engine.retrieval.bm25 import Bm25, TermCounts, bm25_counted, bm25_scores


@pytest.fixture
def index() -> Bm25:
    bm25 = Bm25()
    bm25.add("cat", ["cat", "sat", "mat"])
    bm25.add("dog", ["dog", "sat", "log"])
    bm25.add("bird", ["bird", "sang", "tree"])
    return bm25


def test_a_document_with_the_query_term_outranks_one_without(index: Bm25) -> None:
    # When searching for a word only one document has
    scores = index.scores(["cat"])

    # Then that document scores and the others are absent
    assert set(scores) == {"cat"}
    assert scores["cat"] > 0


def test_a_rarer_term_weighs_more_than_a_common_one(index: Bm25) -> None:
    # Given "sat" in two documents and "mat" in one
    # When each is queried alone
    common = index.scores(["sat"])["cat"]
    rare = index.scores(["mat"])["cat"]

    # Then the rare term contributes more
    assert rare > common


def test_the_score_is_lucene_bm25(index: Bm25) -> None:
    # Given three documents of three terms each (avgdl = dl = 3) and "mat" in one of them
    # When it is scored
    score = index.scores(["mat"])["cat"]

    # Then it is idf · tf / (tf + k1), Lucene's formula with dl = avgdl
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    assert score == pytest.approx(idf * 1 / (1 + 1.2))


def test_more_matching_terms_score_higher(index: Bm25) -> None:
    scores = index.scores(["cat", "sat"])
    assert scores["cat"] > scores["dog"] > 0


def test_a_repeated_query_term_counts_each_time(index: Bm25) -> None:
    once = index.scores(["mat"])["cat"]
    twice = index.scores(["mat", "mat"])["cat"]
    assert twice == pytest.approx(2 * once)


def test_a_shorter_document_scores_higher_for_the_same_term_frequency() -> None:
    # Given two documents holding "cat" once, one padded with other words
    bm25 = Bm25()
    bm25.add("short", ["cat", "x"])
    bm25.add("long", ["cat", "y", "z", "w", "v", "u"])

    # Then length normalisation favours the short one
    scores = bm25.scores(["cat"])
    assert scores["short"] > scores["long"]


def test_removing_a_document_forgets_its_terms(index: Bm25) -> None:
    # When a document is removed
    index.remove("cat")

    # Then it no longer scores and the collection statistics shrink
    assert index.scores(["cat", "sat"]).keys() == {"dog"}
    assert len(index) == 2
    assert "cat" not in index


def test_removing_an_unknown_document_is_a_no_op(index: Bm25) -> None:
    index.remove("unicorn")
    assert len(index) == 3


def test_adding_an_existing_id_replaces_the_document(index: Bm25) -> None:
    # When "cat" is re-added with other words
    index.add("cat", ["fish"])

    # Then its old terms are gone and the new ones score
    assert "cat" not in index.scores(["mat"])
    assert "cat" in index.scores(["fish"])
    assert len(index) == 3


def test_the_allowed_filter_restricts_results_but_not_idf(index: Bm25) -> None:
    # Given the unfiltered score of "dog" for "sat"
    unfiltered = index.scores(["sat"])["dog"]

    # When only "dog" and "bird" are allowed
    filtered = index.scores(["sat"], allowed={"dog", "bird"})

    # Then "cat" is excluded and "dog" keeps its score (IDF is over the whole index, like OpenSearch)
    assert filtered == {"dog": pytest.approx(unfiltered)}


def test_the_allowed_filter_accepts_any_collection(index: Bm25) -> None:
    assert index.scores(["sat"], allowed=["cat"]).keys() == {"cat"}
    assert index.scores(["sat"], allowed=[]) == {}


def test_an_empty_index_or_query_scores_nothing() -> None:
    assert Bm25().scores(["cat"]) == {}
    assert bm25_scores({"a": ["cat"]}, []) == {}


def test_bm25_scores_ranks_an_ad_hoc_set() -> None:
    # Given a few buffered turns, tokenized
    turns = {"t1": ["dinner", "pasta"], "t2": ["lunch", "salad"], "t3": ["pasta", "salad", "lunch"]}

    # When scored for "pasta"
    scores = bm25_scores(turns, ["pasta"])

    # Then the turns with pasta score, the shorter first
    assert list(sorted(scores, key=scores.__getitem__, reverse=True)) == ["t1", "t3"]


def test_invalid_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="k1"):
        Bm25(k1=-1)
    with pytest.raises(ValueError, match="b"):
        Bm25(b=1.5)


def test_scores_from_counted_documents_are_the_index_scores() -> None:
    # Given documents with repeated terms and different lengths, in an index and counted
    docs = {
        "a": ["ship", "ship", "light", "keeper"],
        "b": ["light", "house"],
        "c": ["ship", "sea", "sea", "sea", "storm", "light"],
        "d": [],
    }
    index = Bm25()
    for doc_id, tokens in docs.items():
        index.add(doc_id, tokens)

    # When both score a query with a repeated term and an unknown one
    query = ["ship", "light", "light", "whale"]
    counted = bm25_counted({doc_id: TermCounts.of(tokens) for doc_id, tokens in docs.items()}, query)

    # Then the scores are the same, and a document without a query term is absent
    assert counted == pytest.approx(index.scores(query))
    assert set(counted) == {"a", "b", "c"}
