"""What the local index promises beyond the SearchIndex contract (see tests/contract)."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.adapters.local import memory_index
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.errors import InvalidInput
from memory_engine.ports import IndexDocument, Period

TENANT = "acme"


def _axis(i: int, dim: int = 8) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(dim)]


def _doc(
    doc_id: str, text: str, vector: list[float], thread: str = "t1", tenant: str = TENANT
) -> IndexDocument:
    return IndexDocument(
        tenant=tenant,
        doc_id=doc_id,
        session_uuid="s1",
        thread=thread,
        text=text,
        vector=vector,
        source_dialog_uuids=["d1"],
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_importing_the_module_imports_neither_numpy_nor_tantivy() -> None:
    code = (
        "import sys, memory_engine.adapters.local.index_files; "
        "print('numpy' in sys.modules or 'tantivy' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("text", "query"),
    [("Caroline's paintings of the lake", "painting caroline"), ("지훈이가 학교에 갔다", "지훈 학교")],
)
def test_words_match_in_the_engines_analysed_form(text: str, query: str) -> None:
    # Given a document whose words differ from the query's in form only (a plural and a
    # possessive; Korean particles), as the engine's analyzer relates them
    index = LocalSearchIndex()
    index.upsert([_doc("a", text, _axis(0)), _doc("b", "nothing alike here", _axis(1))])

    # When searched by words alone
    hits = index.search(TENANT, ["t1"], query, [], k=5)

    # Then the document is found by BM25, as the buffered turns' scorer would find it
    assert [hit.doc_id for hit in hits] == ["a"]
    assert hits[0].lexical > 0


def test_upserting_a_document_as_another_kind_moves_it() -> None:
    # Given a memory document
    index = LocalSearchIndex()
    index.upsert([_doc("a", "kayak", _axis(0))])

    # When the same id is written as a turn document
    index.upsert([_doc("a", "kayak", _axis(0)).model_copy(update={"kind": "turn", "memory_id": "m"})])

    # Then only the turn search finds it, by words and by meaning
    assert index.search(TENANT, ["t1"], "kayak", _axis(0), k=5) == []
    [hit] = index.search(TENANT, ["t1"], "kayak", _axis(0), k=5, kind="turn")
    assert (hit.doc_id, hit.memory_id, hit.lexical > 0) == ("a", "m", True)
    assert len(index) == 1


def test_a_lexical_only_candidate_still_gets_its_cosine() -> None:
    # Given one document on the query vector and one holding the query word, 45 degrees off
    index = LocalSearchIndex()
    index.upsert(
        [_doc("near", "nothing shared", _axis(0)), _doc("wordy", "kayak trip", [1.0, 1.0] + [0.0] * 6)]
    )

    # When each retriever has one slot
    hits = {hit.doc_id: hit for hit in index.search(TENANT, ["t1"], "kayak", _axis(0), k=1)}

    # Then "wordy", found by words only, still carries its cosine
    assert set(hits) == {"near", "wordy"}
    assert hits["wordy"].dense == pytest.approx(2**-0.5, abs=1e-6)
    assert hits["wordy"].lexical > 0
    assert hits["near"].lexical == 0


def test_a_dense_only_candidate_still_gets_its_lexical_score() -> None:
    # Given two documents with the query word, the second more often
    index = LocalSearchIndex()
    index.upsert(
        [_doc("a", "kayak", _axis(0)), _doc("b", "kayak kayak kayak", _axis(1)), _doc("c", "x", _axis(2))]
    )

    # When the vector favours "a" but BM25 favours "b", one slot each
    hits = {hit.doc_id: hit for hit in index.search(TENANT, ["t1"], "kayak", _axis(0), k=1)}

    # Then "a" came from dense and still carries its BM25 score
    assert set(hits) == {"a", "b"}
    assert hits["a"].lexical > 0
    assert hits["b"].lexical > hits["a"].lexical


def test_dense_hits_come_first_best_first() -> None:
    index = LocalSearchIndex()
    index.upsert([_doc(f"d{i}", "same words", _axis(i)) for i in range(4)])

    hits = index.search(TENANT, ["t1"], "", [0.1, 0.9, 0.5, 0.0, 0, 0, 0, 0], k=3)

    assert [hit.doc_id for hit in hits] == ["d1", "d2", "d0"]


def test_an_empty_vector_searches_by_words_only() -> None:
    index = LocalSearchIndex()
    index.upsert([_doc("a", "kayak", _axis(0)), _doc("b", "tent", _axis(1))])

    hits = index.search(TENANT, ["t1"], "kayak", [], k=5)

    assert [(hit.doc_id, hit.dense) for hit in hits] == [("a", 0.0)]


def test_vectors_are_stored_unit_normalised() -> None:
    index = LocalSearchIndex()
    index.upsert([_doc("a", "x", [3.0, 4.0] + [0.0] * 6)])

    stored = index.get(TENANT, "a")

    assert stored is not None
    assert stored.vector[:2] == pytest.approx([0.6, 0.8])
    assert stored.text == "x"
    assert index.get(TENANT, "missing") is None
    assert index.get("nobody", "a") is None


def test_a_vector_of_another_dimension_is_refused_and_nothing_is_written() -> None:
    # Given a tenant indexed with 8-dimensional vectors
    index = LocalSearchIndex()
    index.upsert([_doc("a", "x", _axis(0))])

    # When a batch holds one 4-dimensional vector
    with pytest.raises(InvalidInput, match="4-dimensional"):
        index.upsert([_doc("b", "y", _axis(1)), _doc("c", "z", [1.0, 0, 0, 0])])

    # Then no document of the batch was written, and a wrong query dimension is refused too
    assert len(index) == 1
    with pytest.raises(InvalidInput, match="dimensions"):
        index.search(TENANT, ["t1"], "x", [1.0, 0.0], k=1)


def test_tenants_may_use_different_dimensions_in_one_batch() -> None:
    index = LocalSearchIndex()
    index.upsert([_doc("a", "x", _axis(0)), _doc("b", "y", [1.0, 0.0], tenant="small")])

    assert [h.doc_id for h in index.search("small", ["t1"], "", [1.0, 0.0], k=1)] == ["b"]


def test_upserting_a_document_into_another_thread_moves_it() -> None:
    index = LocalSearchIndex()
    index.upsert([_doc("a", "kayak", _axis(0), thread="t1")])

    index.upsert([_doc("a", "kayak", _axis(0), thread="t2")])

    assert index.search(TENANT, ["t1"], "kayak", _axis(0), k=5) == []
    assert [h.doc_id for h in index.search(TENANT, ["t2"], "kayak", _axis(0), k=5)] == ["a"]
    assert len(index) == 1


def test_rows_stay_consistent_through_growth_and_deletes() -> None:
    # Given a hundred documents (the block grows several times), each with its own direction
    dim = 128
    index = LocalSearchIndex()
    index.upsert([_doc(f"d{i}", f"word{i}", _axis(i, dim)) for i in range(100)])

    # When every other one is deleted (rows are swapped into the holes)
    index.delete(TENANT, [f"d{i}" for i in range(0, 100, 2)])

    # Then each survivor is still found by its own vector and its own word, and the dead are gone
    assert len(index) == 50
    for i in range(1, 100, 2):
        hits = index.search(TENANT, ["t1"], f"word{i}", _axis(i, dim), k=1)
        assert [(h.doc_id, round(h.dense, 5)) for h in hits] == [(f"d{i}", 1.0)]
    assert index.get(TENANT, "d0") is None


def test_length_counts_documents_of_every_tenant_and_clear_empties() -> None:
    index = LocalSearchIndex()
    index.upsert([_doc("a", "x", _axis(0)), _doc("a", "x", _axis(0), tenant="other")])
    assert len(index) == 2

    index.clear()

    assert len(index) == 0


def test_concurrent_upserts_and_searches_do_not_corrupt_the_index() -> None:
    # Given writers and readers on one index
    index = LocalSearchIndex()
    errors: list[BaseException] = []

    def write(start: int) -> None:
        try:
            for i in range(start, start + 200):
                index.upsert([_doc(f"d{i}", f"note {i}", _axis(i % 8))])
                if i % 3 == 0:
                    index.delete(TENANT, [f"d{i}"])
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    def read() -> None:
        try:
            for _ in range(200):
                index.search(TENANT, ["t1"], "note", _axis(0), k=5)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    # When they run at once
    workers = [threading.Thread(target=write, args=(n * 1000,)) for n in range(3)]
    workers += [threading.Thread(target=read) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    # Then nothing failed and exactly the undeleted documents remain
    assert errors == []
    assert len(index) == sum(1 for n in range(3) for i in range(n * 1000, n * 1000 + 200) if i % 3)


def test_searching_the_thread_that_holds_every_document_finds_what_the_filtered_search_finds() -> None:
    # Given an index whose documents all sit in one tenant's one thread
    index = LocalSearchIndex()
    texts = [
        "pepper the cat naps",
        "the cat and the dog",
        "a dog named pepper",
        "rain all day",
        "cat cat cat",
    ]
    index.upsert([_doc(f"d{i}", text, _axis(i % 8)) for i, text in enumerate(texts)])

    # When its BM25 top k is searched without the threads' filter and with it
    args = ("memory", TENANT, ["t1"], ["pepper", "cat"], 3, ["d3"])
    whole = index.lexical.search(*args, whole=True)
    filtered = index.lexical.search(*args, whole=False)

    # Then both find the same documents with the same scores, in the same order
    assert list(whole.lexical.items()) == list(filtered.lexical.items())
    assert whole.lexical_of == filtered.lexical_of and len(whole.lexical) == 3


def test_a_tenants_only_thread_does_not_show_another_tenants_documents_of_the_same_thread_name() -> None:
    # Given two tenants with a thread of the same name, one document each sharing the query's word
    index = LocalSearchIndex()
    index.upsert(
        [_doc("mine", "pepper the cat", _axis(0)), _doc("theirs", "pepper", _axis(1), tenant="other")]
    )

    # When one tenant searches its only thread by words
    hits = index.search(TENANT, ["t1"], "pepper", [], k=5)

    # Then it finds its own document only
    assert [hit.doc_id for hit in hits] == ["mine"]


@pytest.mark.parametrize("threshold", [None, 1], ids=["exact", "graph"])
def test_a_wide_event_time_range_asks_for_more_nearest_until_k_are_inside_it(
    monkeypatch: pytest.MonkeyPatch, threshold: int | None
) -> None:
    # Given 60 memories a day apart, the three of 10-12 February the farthest from the query, and
    # a range read document by document only up to 2 of them (so 3 take the growing-nearest path)
    monkeypatch.setattr(memory_index, "READ_AT_MOST", 2)
    index = LocalSearchIndex(ann_threshold=threshold)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    index.upsert(
        [
            IndexDocument(
                tenant="t", doc_id=f"d{day}", session_uuid="s", thread="th", text="walk",
                vector=[1.0, 0.3 if 40 <= day <= 42 else day / 1000, 0.0],
                source_dialog_uuids=[f"dialog-{day}"], created_at=start,
                occurred_at=start + timedelta(days=day),
            )
            for day in range(60)
        ]
    )  # fmt: skip
    february = Period(since=start + timedelta(days=40), until=start + timedelta(days=42))

    # When the 3 nearest within it are asked for by meaning
    hits = index.search("t", ["th"], "", [1.0, 0.0, 0.0], k=3, said=february)

    # Then they are those three, found by asking for the nearest 12, then 48, then all
    assert sorted(hit.doc_id for hit in hits) == ["d40", "d41", "d42"]
