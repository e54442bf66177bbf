"""The FTS5 candidate for the local index's lexical half (bench/experiments/fts5_lexical.py) answers
as tantivy's `LexicalIndex` does on a toy corpus, so `lexical_ab` times two halves that agree.

BM25 scores are close, not equal: FTS5's idf is ln((N − n + 0.5)/(n + 0.5)) where tantivy's is
ln(1 + (N − n + 0.5)/(n + 0.5)). With each query term in 1 to 3 of the 40 documents here, that puts
tantivy's scores 1.1–3.7 % above FTS5's; the length normalisation is the same (every document is
shorter than the lengths tantivy's fieldnorm codes round), so each term's ratio is its idf's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.experiments.fts5_lexical import Fts5LexicalIndex
from bench.experiments.lexical_ab import _key, documents, overlap
from bench.speed.index_fixture import _made
from memory_engine.adapters.local.lexical import LexicalIndex
from memory_engine.indexing.documents import index_documents, spoken_date
from memory_engine.ports import IndexDocument
from memory_engine.retrieval.text import tokenize

WHEN = datetime(2026, 1, 1, tzinfo=UTC)
TOPICS = [
    "Caroline went to the LGBTQ support group yesterday and felt welcome",
    "Caroline talked about the support group and her painting of a sunrise",
    "Melanie painted a sunrise over the lake with her kids",
    "The lake was cold but Melanie swam anyway",
    "나는 어제 서울에서 친구를 만났다",
    "서울 여행이 즐거웠다 친구와 함께 걸었다",
    "부산에서 바다를 보았다",
]
FILLER = [f"Day {i} notes: weather with clouds, rain and wind, a quiet walk home" for i in range(33)]
QUERIES = [
    "What did Caroline do at the support group?",
    "Melanie sunrise lake",
    "서울에서 친구를 만났어?",
    "부산 바다",
]


def _doc(
    tenant: str, doc_id: str, text: str, thread: str = "t1", memory_id: str | None = None
) -> IndexDocument:
    return IndexDocument(
        tenant=tenant, doc_id=doc_id, session_uuid="s1", thread=thread, text=text, vector=[0.0],
        source_dialog_uuids=[f"d-{doc_id}"], created_at=WHEN, kind="turn" if memory_id else "memory",
        memory_id=memory_id, occurred_at=WHEN if memory_id else None,
    )  # fmt: skip


def _corpus() -> list[IndexDocument]:
    docs = [_doc("a", f"m{i}", text) for i, text in enumerate(TOPICS + FILLER)]
    docs += [
        _doc("a", f"m{i}:{j}", line, memory_id=f"m{i}")
        for i in (0, 4)
        for j, line in enumerate(TOPICS[i : i + 2])
    ]
    return docs


@pytest.fixture(scope="module")
def both() -> Iterator[tuple[LexicalIndex, Fts5LexicalIndex]]:
    tantivy, fts5 = LexicalIndex(), Fts5LexicalIndex()
    for index in (tantivy, fts5):
        index.write(_corpus())
    yield tantivy, fts5
    tantivy.close()
    fts5.close()


def test_fts5_indexes_the_analyzers_korean_and_accented_terms_exactly_as_given(tmp_path: Path) -> None:
    # Given a text whose terms hold Hangul, accents and a final sigma, indexed into an FTS5 file
    text = "나는 어제 서울에서 친구를 만났다. AI가 O'Brien café naïve Ελλάς 2023년에"
    index = Fts5LexicalIndex(tmp_path / "lexical.sqlite3")
    index.write([_doc("a", "m1", text)])
    index.close()

    # When FTS5's own vocabulary of the memory table is read
    conn = sqlite3.connect(tmp_path / "lexical.sqlite3")
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, lexical_memory, row)")
    terms = {term for (term,) in conn.execute("SELECT term FROM temp.vocab")}

    # Then it is the analyzer's terms, none split, folded or dropped
    assert terms == set(tokenize(text))
    assert {"서울에서", "서울", "café", "ελλάς"} <= terms


@pytest.mark.parametrize("question", QUERIES)
def test_both_halves_rank_a_question_in_the_same_order_with_scores_within_a_few_percent(
    both: tuple[LexicalIndex, Fts5LexicalIndex], question: str
) -> None:
    # Given the same corpus in both halves, When each searches the tenant's thread for a question
    tantivy, fts5 = (index.search("memory", "a", ["t1"], tokenize(question), 5) for index in both)

    # Then the same documents come back in the same order, tantivy's scores 0.5–4 % above FTS5's
    assert list(tantivy.lexical) == list(fts5.lexical)
    assert len(tantivy.lexical) >= 1
    for doc_id, score in fts5.lexical.items():
        assert 1.005 < tantivy.lexical[doc_id] / score < 1.04


def test_a_search_over_the_whole_kind_finds_what_the_thread_filtered_one_finds(
    both: tuple[LexicalIndex, Fts5LexicalIndex],
) -> None:
    # Given one thread holding every document, When each half searches with and without the filter
    terms = tokenize("Caroline painting sunrise")
    for index in both:
        filtered = index.search("memory", "a", ["t1"], terms, 3)
        whole = index.search("memory", "a", ["t1"], terms, 3, whole=True)

        # Then both searches give the same ranking
        assert filtered.lexical == whole.lexical


def test_a_term_given_twice_weighs_twice_in_both_halves(both: tuple[LexicalIndex, Fts5LexicalIndex]) -> None:
    for index in both:
        # When one half searches for "lake" once and twice
        once = index.search("memory", "a", ["t1"], ["lake"], 5).lexical
        twice = index.search("memory", "a", ["t1"], ["lake", "lake"], 5).lexical

        # Then every document's score doubles
        assert set(once) == set(twice) == {"m2", "m3"}
        assert all(twice[doc] == pytest.approx(2 * once[doc], rel=1e-5) for doc in once)


def test_named_documents_get_the_same_bm25_zero_without_a_term_and_unknown_ones_are_left_out(
    both: tuple[LexicalIndex, Fts5LexicalIndex],
) -> None:
    # Given dense hits named beside the query: one holding its words, one not, one not indexed
    named = ["m3", "m10", "nowhere"]
    tantivy, fts5 = (index.search("memory", "a", ["t1"], tokenize("cold lake"), 1, named) for index in both)

    # Then both halves give the named documents they hold, the one without a term at 0
    assert set(tantivy.lexical_of) == set(fts5.lexical_of) == {"m3", "m10"}
    assert tantivy.lexical_of["m10"] == fts5.lexical_of["m10"] == 0.0
    assert 1.005 < tantivy.lexical_of["m3"] / fts5.lexical_of["m3"] < 1.04
    assert {doc: fts5.stored[doc][:5] for doc in ("m3", "m10")} == {
        doc: tantivy.stored[doc][:5] for doc in ("m3", "m10")
    }


def test_lookup_and_parts_return_the_same_stored_records(both: tuple[LexicalIndex, Fts5LexicalIndex]) -> None:
    # When both halves look documents up by id and by the memory they are part of
    looked = [index.lookup("a", ["m0", "m4:1", "nowhere"]) for index in both]
    parts = [index.parts("a", ["m4"]) for index in both]

    # Then they find the same documents of the same kinds with the same echoed fields
    tantivy, fts5 = ({doc: (kind, stored[:5]) for doc, (kind, stored) in found.items()} for found in looked)
    assert tantivy == fts5
    assert set(fts5) == {"m0", "m4:1"}
    assert fts5["m4:1"] == ("turn", ("m4:1", "t1", "m4", WHEN, TOPICS[5]))
    tantivy_parts, fts5_parts = (sorted((kind, stored[:5]) for kind, stored in found) for found in parts)
    assert tantivy_parts == fts5_parts
    assert len(parts[1]) == 2


def test_rewrites_deletes_and_a_tenants_clear_change_both_halves_alike() -> None:
    # Given both halves holding two tenants' documents
    indexes = (LexicalIndex(), Fts5LexicalIndex())
    for index in indexes:
        index.write([_doc("a", "m1", "sunrise lake"), _doc("a", "m2", "cold lake"), _doc("b", "m1", "lake")])

        # When a document is rewritten, another deleted, and then tenant b cleared
        index.write([_doc("a", "m1", "sunrise over the sea")], deleted=[("memory", "a", "m2")])
        lake = index.search("memory", "a", ["t1"], ["lake"], 5).lexical
        sea = index.search("memory", "a", ["t1"], ["sea"], 5).lexical
        index.clear("b")

        # Then the old words are gone, the new ones found, and only tenant a is left
        assert (lake, list(sea)) == ({}, ["m1"])
        assert index.count("memory") == 1
        assert index.search("memory", "b", ["t1"], ["lake"], 5).lexical == {}


def test_the_ab_writes_the_retrieve_fixtures_documents_text_for_text() -> None:
    # Given the retrieve fixture's first memories as its generator makes them (vectors and all)
    fixture = [
        doc
        for made in _made(0, 3, "test")
        for memory, sources in made
        for doc in index_documents(memory, sources)
    ]

    # When the A/B generates the same memories without vectors
    ab = [doc for chunk in documents(0, 3) for doc in chunk]

    # Then both lexical halves get the fixture's documents: same ids, kinds and text
    assert [(doc.doc_id, doc.kind, doc.text) for doc in ab] == [
        (doc.doc_id, doc.kind, doc.text) for doc in fixture
    ]
    assert len(ab) == 27


def test_the_top10_overlap_counts_copies_of_one_turn_as_that_text() -> None:
    # Given two rankings of one question: turns as texts (copies tie), memories as ids
    a = [{"memory": ["m1", "m2"], "turn": ["hi", "hi", "yo"]}]
    b = [{"memory": ["m2", "m3"], "turn": ["hi", "yo", "yo"]}]

    # When their overlap is taken, Then each kind's share of common entries is its own
    assert overlap(a, b) == {"memory": 0.5, "turn": pytest.approx(2 / 3)}


def test_a_turn_is_compared_by_its_line_without_the_date_and_a_memory_by_its_id() -> None:
    # Given two copies of one line of dialogue said on two days (the date indexed with it), and a memory
    days = [WHEN, WHEN.replace(day=2)]
    dated = [
        _doc("k", f"m9:{at}", f"Mel: the lake\n{spoken_date(day)}", memory_id="m9").model_copy(
            update={"occurred_at": day}
        )
        for at, day in enumerate(days)
    ]
    fts5 = Fts5LexicalIndex()
    fts5.write([*dated, _doc("k", "m9", "the lake")])

    # When the A/B keys what a search found
    found = [fts5.search(kind, "k", ["t1"], ["lake"], 5) for kind in ("turn", "memory")]
    keys = [_key(stored) for result in found for stored in result.stored.values()]

    # Then the copies are one line, the memory its id
    assert keys == ["Mel: the lake", "Mel: the lake", "m9"]
