"""The local index's vectorised BM25 must score exactly like the reference `Bm25`."""

from __future__ import annotations

import random

import pytest

from memory_engine.adapters.local.array_bm25 import ArrayBm25
from memory_engine.retrieval.bm25 import Bm25

WORDS = [f"w{i}" for i in range(40)]


def _scores_by_id(index: ArrayBm25, query: list[str], groups: list[int]) -> dict[str, float]:
    by_slot = index.scores(query, groups)
    return {index.doc_id(int(slot)): float(by_slot[slot]) for slot in by_slot.nonzero()[0]}


@pytest.mark.parametrize("seed", range(5))
def test_scores_match_the_reference_through_adds_replacements_and_removals(seed: int) -> None:
    # Given the same random sequence of adds, re-adds and removals applied to both indexes,
    # with queries in between so cached postings arrays are updated in place, not just built
    rng = random.Random(seed)
    reference, vectorised = Bm25(), ArrayBm25()
    group_of: dict[str, int] = {}
    for step in range(400):
        doc_id = f"d{rng.randrange(120)}"
        if rng.random() < 0.25:
            reference.remove(doc_id)
            vectorised.remove(doc_id)
            group_of.pop(doc_id, None)
        else:
            tokens = [rng.choice(WORDS[: rng.randint(3, 40)]) for _ in range(rng.randint(1, 30))]
            group_of[doc_id] = rng.randrange(3)
            reference.add(doc_id, tokens)
            vectorised.add(doc_id, group_of[doc_id], tokens)
        if step % 10:
            continue

        # When both score the same query within some groups
        query = rng.sample(WORDS, rng.randint(1, 5))
        groups = rng.sample(range(3), rng.randint(1, 3))
        allowed = {doc_id for doc_id, group in group_of.items() if group in groups}

        # Then they agree on which documents score and by how much
        expected = reference.scores(query, allowed)
        assert _scores_by_id(vectorised, query, groups) == pytest.approx(expected, rel=1e-9)
    assert len(vectorised) == len(reference)


def test_a_freed_slot_is_reused_without_its_old_terms() -> None:
    # Given a document removed and another added in its place
    index = ArrayBm25()
    index.add("old", 0, ["apple"])
    index.remove("old")
    index.add("new", 0, ["pear"])

    # Then the new document does not inherit the old one's terms
    assert _scores_by_id(index, ["apple"], [0]) == {}
    assert set(_scores_by_id(index, ["pear"], [0])) == {"new"}


def test_documents_of_other_groups_score_zero() -> None:
    index = ArrayBm25()
    index.add("mine", 0, ["apple"])
    index.add("theirs", 1, ["apple"])

    assert set(_scores_by_id(index, ["apple"], [0])) == {"mine"}
    assert set(_scores_by_id(index, ["apple"], [0, 1])) == {"mine", "theirs"}


def test_an_empty_index_scores_nothing() -> None:
    assert len(ArrayBm25().scores(["apple"], [0])) == 0


@pytest.mark.parametrize("seed", range(3))
def test_an_index_rebuilt_from_its_arrays_scores_like_the_reference_through_later_writes(seed: int) -> None:
    # Given random adds and removals, then the index turned into arrays and back (as a restart
    # loads it), then more adds, replacements and removals, the loaded documents' terms found
    # from the postings
    from memory_engine.adapters.local.array_bm25 import Bm25Stats

    rng = random.Random(seed)
    reference, vectorised = Bm25(), ArrayBm25()

    def step(index: ArrayBm25) -> None:
        doc_id = f"d{rng.randrange(80)}"
        if rng.random() < 0.3:
            reference.remove(doc_id)
            index.remove(doc_id)
        else:
            tokens = [rng.choice(WORDS[: rng.randint(3, 40)]) for _ in range(rng.randint(1, 30))]
            reference.add(doc_id, tokens)
            index.add(doc_id, 0, tokens)

    for _ in range(200):
        step(vectorised)
    stats = Bm25Stats()
    loaded = ArrayBm25.from_arrays(vectorised.to_arrays(), stats)
    assert (stats.n_docs, stats.total_len, stats.df) == (
        vectorised.stats.n_docs, vectorised.stats.total_len, vectorised.stats.df,
    )  # fmt: skip

    # When the loaded index goes through the same kind of writes as the reference
    for _ in range(200):
        step(loaded)

    # Then every query scores every document as the reference does
    for _ in range(20):
        query = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
        expected = {d: s for d, s in reference.scores(query).items() if s > 0}
        got = _scores_by_id(loaded, query, [0])
        assert got.keys() == expected.keys()
        assert all(got[d] == pytest.approx(expected[d]) for d in expected)


@pytest.mark.parametrize("seed", range(3))
def test_top_gives_the_k_best_of_the_full_scores_and_the_asked_slots_scores(seed: int) -> None:
    # Given an index of random documents, some removed
    rng = random.Random(seed)
    index = ArrayBm25()
    for n in range(150):
        index.add(f"d{n}", 0, [rng.choice(WORDS[: rng.randint(3, 40)]) for _ in range(rng.randint(1, 20))])
    removed = set(rng.sample(range(150), 30))
    for n in removed:
        index.remove(f"d{n}")
    live = [index.slot(f"d{n}") for n in range(150) if n not in removed]

    for _ in range(10):
        query = rng.sample(WORDS, rng.randint(1, 4))
        asked = rng.sample(live, 12)
        full = index.scores(query)

        # When the k best are asked for, with the scores of a few slots besides
        slots, scores, asked_scores = index.top(query, 10, asked)

        # Then they are the full array's k best, to the bit, and the asked slots read from it
        matching = int((full > 0).sum())
        assert len(slots) == min(10, matching)
        assert scores.tolist() == full[slots].tolist()
        if matching > 10:
            assert scores.min() >= sorted(full.tolist(), reverse=True)[9]
        assert asked_scores.tolist() == full[asked].tolist()
