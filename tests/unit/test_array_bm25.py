"""The local index's vectorised BM25 must score exactly like the reference `Bm25`."""

from __future__ import annotations

import random

import pytest

from memory_engine.adapters.local import array_bm25
from memory_engine.adapters.local.array_bm25 import ArrayBm25
from memory_engine.retrieval.bm25 import Bm25

WORDS = [f"w{i}" for i in range(40)]


@pytest.fixture(params=["direct", "maxscore"])
def top_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a `top` test twice: scoring every posting (small queries), and through MaxScore
    (what queries over ~50k postings take; forced here on small indexes)."""
    if request.param == "maxscore":
        monkeypatch.setattr(array_bm25, "_DIRECT_POSTINGS", 0)
    return str(request.param)


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
def test_top_gives_the_k_best_of_the_full_scores_and_the_asked_slots_scores(seed: int, top_path: str) -> None:
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


@pytest.mark.parametrize("seed", range(3))
def test_top_skips_a_common_term_yet_returns_the_exact_k_best(seed: int, top_path: str) -> None:
    # Given many documents holding a common word, a few of them also a rare one, of varied
    # lengths, so the common word's weight cannot lift a document to the k-th best score
    rng = random.Random(seed)
    index = ArrayBm25()
    for n in range(3000):
        words = ["common"] * rng.randint(1, 3) + [rng.choice(WORDS) for _ in range(rng.randint(0, 12))]
        if n % 50 == 0:
            words += ["rare"] * rng.randint(1, 2)
        index.add(f"d{n}", 0, words)
    for n in rng.sample(range(3000), 200):
        index.remove(f"d{n}")
    full = index.scores(["common", "rare", "w3"])
    live = [index.slot(f"d{n}") for n in range(3000) if f"d{n}" in index._slot_of]
    asked = rng.sample(live, 40)

    # When the 20 best are asked for, with the scores of a few documents besides (most of them
    # holding the common word only, which the search reads only where it must)
    slots, scores, asked_scores = index.top(["common", "rare", "w3"], 20, asked)

    # Then they are the 20 best of the full score array, ties aside, and the asked ones' scores
    # are the full ones
    best = sorted(full.tolist(), reverse=True)
    assert len(slots) == 20
    assert sorted(scores.tolist(), reverse=True) == best[:20]
    assert scores.tolist() == full[slots].tolist()
    assert asked_scores.tolist() == full[asked].tolist()


def test_scores_follow_writes_to_the_postings_and_the_average_length() -> None:
    # Given a query answered once
    reference, index = Bm25(), ArrayBm25()
    for n, words in enumerate([["apple", "pear"], ["apple"], ["pear", "plum", "fig"]]):
        reference.add(f"d{n}", words)
        index.add(f"d{n}", 0, words)
    index.scores(["apple"])

    # When a document of the average length (2) joins the term's postings, leaving the average
    # as it was; then one changes the average without holding the term; then one is replaced
    writes = (("d3", ["apple", "kiwi"]),), (("d4", ["fig"] * 9),), (("d1", ["apple", "apple", "kiwi"]),)
    for batch in writes:
        for doc_id, words in batch:
            reference.add(doc_id, words)
            index.add(doc_id, 0, words)

        # Then after each the scores are the reference's
        assert _scores_by_id(index, ["apple"], [0]) == pytest.approx(reference.scores(["apple"]), rel=1e-12)


def test_top_breaks_ties_at_the_kth_score_by_slot(top_path: str) -> None:
    # Given documents of identical text (equal scores), after a better one, some removed so
    # their slots are reused out of order
    index = ArrayBm25()
    index.add("best", 0, ["apple", "apple", "pear"])
    for n in range(30):
        index.add(f"same{n}", 0, ["apple", "kiwi"])
    for n in (3, 7, 11):
        index.remove(f"same{n}")
    for n in (40, 41):
        index.add(f"same{n}", 0, ["apple", "kiwi"])
    tied = sorted(index.slot(doc_id) for doc_id in index._slot_of if doc_id != "best")

    # When the 5 best are asked for, by a query read whole or in part (a rare term first)
    for query in (["apple"], ["pear", "apple"]):
        slots, _, _ = index.top(query, 5)

        # Then the better one is in, and the ties are the lowest slots
        assert sorted(slots.tolist()) == sorted([index.slot("best"), *tied[:4]])


def test_an_index_unpickled_without_posting_lengths_derives_them_and_keeps_scoring(top_path: str) -> None:
    # Given an index pickled (as format-1 folders held it: postings without their lengths),
    # then more adds and removals on the copy, before any query
    import pickle

    rng = random.Random(7)
    reference, index = Bm25(), ArrayBm25()
    for n in range(60):
        tokens = [rng.choice(WORDS[:12]) for _ in range(rng.randint(1, 9))]
        reference.add(f"d{n}", tokens)
        index.add(f"d{n}", 0, tokens)
    copy = pickle.loads(pickle.dumps(index))
    for n in range(0, 60, 7):
        reference.remove(f"d{n}")
        copy.remove(f"d{n}")
    for n in range(60, 70):
        tokens = [rng.choice(WORDS[:12]) for _ in range(rng.randint(1, 9))]
        reference.add(f"d{n}", tokens)
        copy.add(f"d{n}", 0, tokens)

    # Then every query scores as the reference does, in full and through top
    for word in WORDS[:12]:
        expected = {d: s for d, s in reference.scores([word, "w1"]).items() if s > 0}
        assert _scores_by_id(copy, [word, "w1"], [0]) == pytest.approx(expected, rel=1e-12)
        _, scores, _ = copy.top([word, "w1"], 5)
        assert sorted(scores.tolist(), reverse=True) == pytest.approx(
            sorted(expected.values(), reverse=True)[:5]
        )


def test_top_falls_back_to_a_sure_floor_when_its_estimate_overshoots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(array_bm25, "_DIRECT_POSTINGS", 0)
    # Given a term in 5,000 documents (its floor is estimated from every second posting), where
    # only the 10 short documents at sampled positions score high and every other one is long
    index = ArrayBm25()
    for n in range(5000):
        short = n % 2 == 0 and n < 20
        index.add(f"d{n}", 0, ["word"] + ([] if short else [f"filler{n % 7}"] * 30))
    full = index.scores(["word"])

    # When its 20 best are asked for (the estimate is the sample's 10th best: above the 20th)
    slots, scores, _ = index.top(["word"], 20)

    # Then the 20 best come back all the same, not only the 10 above the estimate
    assert len(slots) == 20
    assert sorted(scores.tolist(), reverse=True) == sorted(full.tolist(), reverse=True)[:20]
