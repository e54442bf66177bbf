"""SearchIndex contract: the same assertions for every backend that can run here, each as it is
and behind a settling index (`-settling`: writes shown late, as OpenSearch shows them), plus what a
settling index does before it settles.

The local in-process index always, exact and with HNSW graphs (`local-ann`), each also as the
persisted index loaded back from disk after every write (`-reloaded`); the OpenSearch
adapter when OPENSEARCH_URL points at a cluster
(a test index of its own per test, created and dropped; OPENSEARCH_SERVICE `es` or `aoss`, default
`es`, and OPENSEARCH_ANALYZER, default `standard`, describe it). Tenants are unique per test so a
shared cluster is safe. Vectors are hand-made 8-dimensional directions, so no model is loaded.
"""

from __future__ import annotations

import math
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from memory_engine.errors import InvalidInput
from memory_engine.ports import DocKind, EventuallyConsistent, IndexDocument, IndexHit, Period, SearchIndex
from memory_engine.retrieval.text import tokenize
from memory_engine.retrieval.timeline import Window
from memory_engine_app.settling_index import SettlingIndex


@contextmanager
def _local() -> Iterator[SearchIndex]:
    from memory_engine.adapters.local.memory_index import LocalSearchIndex

    yield LocalSearchIndex()


@contextmanager
def _local_ann() -> Iterator[SearchIndex]:
    # A threshold of one document: every shard is an HNSW graph from its first document on.
    from memory_engine.adapters.local.memory_index import LocalSearchIndex

    yield LocalSearchIndex(ann_threshold=1)


class _Reloaded:
    """A persisted local index checkpointed and loaded back from its folder after every write, so
    every read and every later write meets an index as a restart loads it (format on disk, lazy
    rows, postings and graphs used in place)."""

    def __init__(self, directory: Path, ann_threshold: int | None) -> None:
        from memory_engine.adapters.local.index_files import PersistedIndex

        self._directory, self._threshold = directory, ann_threshold
        self._index = PersistedIndex(directory, ann_threshold)

    def _reload(self) -> None:
        from memory_engine.adapters.local.index_files import PersistedIndex

        self._index.close()
        self._index = PersistedIndex.load(self._directory, self._threshold)

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        self._index.upsert(docs)
        self._reload()

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        self._index.delete(tenant, doc_ids)
        self._reload()

    def clear(self, tenant: str | None = None) -> None:
        self._index.clear(tenant)
        self._reload()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)


def _index_folder() -> tempfile.TemporaryDirectory[str]:
    """A folder for a persisted index. Its removal may meet a file tantivy wrote after the
    index's close (seen once, with both cores busy: "Directory not empty: 'lexical-memory'" at
    teardown, after the test had passed); what the tests check ends before, so a leftover
    temporary file is not a failure."""
    return tempfile.TemporaryDirectory(ignore_cleanup_errors=True)


@contextmanager
def _local_reloaded() -> Iterator[SearchIndex]:
    with _index_folder() as folder:
        index = _Reloaded(Path(folder), ann_threshold=None)
        yield cast(SearchIndex, index)
        index.close()  # tantivy merges in background threads: let them end before the folder goes


@contextmanager
def _local_ann_reloaded() -> Iterator[SearchIndex]:
    with _index_folder() as folder:
        index = _Reloaded(Path(folder), ann_threshold=1)
        yield cast(SearchIndex, index)
        index.close()


@contextmanager
def _opensearch() -> Iterator[SearchIndex]:
    url = os.environ.get("OPENSEARCH_URL")
    if not url:
        pytest.skip("OPENSEARCH_URL is not set: the OpenSearch index contract needs a cluster to run against")
    from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex

    index = OpenSearchIndex(
        url,
        index=f"memory-engine-contract-{uuid.uuid4().hex[:12]}",
        dimension=8,
        service=os.environ.get("OPENSEARCH_SERVICE", "es"),
        analyzer=os.environ.get("OPENSEARCH_ANALYZER", "standard"),  # type: ignore[arg-type]
        refresh=True,
    )
    index.create_index()
    try:
        yield index
    finally:
        index.client.indices.delete(index=index.index)


_BACKENDS: dict[str, Callable[[], AbstractContextManager[SearchIndex]]] = {
    "local": _local,
    "local-ann": _local_ann,
    "local-reloaded": _local_reloaded,
    "local-ann-reloaded": _local_ann_reloaded,
    "opensearch": _opensearch,
}
SETTLE = 30.0


class _Clock:
    """Seconds that move only when told: the settling index's refresh delay without sleeps."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class _WaitsAfterWrites:
    """A settling index (writes shown `SETTLE` seconds late, as OpenSearch shows them) used the
    way the contract can hold on it: the test's time passes the settle time after each write, so
    every assertion meets what the index shows once settled, through the delayed path."""

    def __init__(self, index: SettlingIndex, clock: _Clock) -> None:
        self._index, self._clock = index, clock

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        before = self._index.pending
        self._index.upsert(docs)
        assert self._index.pending == before + len(docs)  # not shown yet: the delay is in the path
        self._clock.now += SETTLE

    def delete(self, tenant: str, doc_ids: Sequence[str]) -> None:
        self._index.delete(tenant, doc_ids)
        self._clock.now += SETTLE

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)


def _settling(backend: Callable[[], AbstractContextManager[SearchIndex]]) -> Callable[[], Any]:
    @contextmanager
    def factory() -> Iterator[SearchIndex]:
        with backend() as inner:
            clock = _Clock()
            yield cast(SearchIndex, _WaitsAfterWrites(SettlingIndex(inner, SETTLE, clock), clock))

    return factory


# Every backend as it is, and behind a settling index (`-settling`).
_FACTORIES: dict[str, Callable[[], AbstractContextManager[SearchIndex]]] = {
    **_BACKENDS,
    **{f"{name}-settling": _settling(backend) for name, backend in _BACKENDS.items()},
}


@pytest.fixture(params=sorted(_FACTORIES))
def index(request: pytest.FixtureRequest) -> Iterator[SearchIndex]:
    with _FACTORIES[request.param]() as backend:
        yield backend
        backend.clear()


@pytest.fixture(params=sorted(_BACKENDS))
def settling(request: pytest.FixtureRequest) -> Iterator[tuple[SettlingIndex, _Clock]]:
    """A backend behind a settling index, and the clock that moves it."""
    with _BACKENDS[request.param]() as backend:
        clock = _Clock()
        yield SettlingIndex(backend, SETTLE, clock), clock
        backend.clear()


@pytest.fixture
def tenant() -> str:
    return f"tenant-{uuid.uuid4().hex[:8]}"


def _axis(i: int, dim: int = 8) -> list[float]:
    return [1.0 if j == i else 0.0 for j in range(dim)]


def _mix(a: list[float], b: list[float], weight: float) -> list[float]:
    raw = [(1 - weight) * x + weight * y for x, y in zip(a, b, strict=True)]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def _doc(tenant: str, doc_id: str, text: str, vector: list[float], thread: str = "thread-1") -> IndexDocument:
    return IndexDocument(
        tenant=tenant,
        doc_id=doc_id,
        session_uuid=f"session-of-{thread}",
        thread=thread,
        text=text,
        vector=vector,
        source_dialog_uuids=[f"dialog-of-{doc_id}"],
        created_at=datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC),
    )


def _by_id(hits: list[IndexHit]) -> dict[str, IndexHit]:
    return {hit.doc_id: hit for hit in hits}


def _seed(index: SearchIndex, tenant: str) -> None:
    index.upsert(
        [
            _doc(tenant, "orchard", "We picked apples in the orchard all afternoon", _axis(0)),
            _doc(tenant, "bicycle", "My bicycle chain broke on the way to work", _axis(1)),
            _doc(tenant, "concert", "The jazz concert downtown was loud and late", _axis(2)),
        ]
    )


def test_searching_an_empty_index_returns_nothing(index: SearchIndex, tenant: str) -> None:
    assert index.search(tenant, ["thread-1"], "apples", _axis(0), k=5) == []


def test_a_document_is_found_by_meaning_when_no_word_matches(index: SearchIndex, tenant: str) -> None:
    # Given three documents pointing in different directions
    _seed(index, tenant)

    # When the query shares no word but points near the orchard document
    hits = index.search(tenant, ["thread-1"], "fruit harvest", _mix(_axis(0), _axis(1), 0.2), k=1)

    # Then the orchard document is the dense candidate, with a cosine close to 1
    assert [hit.doc_id for hit in hits] == ["orchard"]
    assert hits[0].dense == pytest.approx(0.97, abs=0.01)
    assert hits[0].lexical == 0


def test_a_document_is_found_by_words_when_its_meaning_is_far(index: SearchIndex, tenant: str) -> None:
    # Given three documents
    _seed(index, tenant)

    # When the vector points at the bicycle but the words name the concert, with one slot each
    hits = _by_id(index.search(tenant, ["thread-1"], "jazz concert", _axis(1), k=1))

    # Then both retrievers contribute: the bicycle by meaning, the concert by words
    assert set(hits) == {"bicycle", "concert"}
    assert hits["concert"].lexical > 0
    assert hits["bicycle"].dense == pytest.approx(1.0, abs=1e-5)


def test_a_document_found_only_by_its_words_carries_its_cosine_to_the_query(
    index: SearchIndex, tenant: str
) -> None:
    # Given three documents
    _seed(index, tenant)

    # When the vector leans to the bicycle, partly towards the concert, and the words name the concert
    query = _mix(_axis(1), _axis(2), 0.3)
    hits = _by_id(index.search(tenant, ["thread-1"], "jazz concert", query, k=1))

    # Then the concert, found by words alone, has its cosine to the query as the bicycle has its own
    assert hits["concert"].dense == pytest.approx(query[2], abs=1e-3)
    assert hits["bicycle"].dense == pytest.approx(query[1], abs=1e-3)


def test_hits_are_unique_by_document(index: SearchIndex, tenant: str) -> None:
    # Given a document that both retrievers find first
    _seed(index, tenant)

    # When searched with its own words and vector
    hits = index.search(tenant, ["thread-1"], "apples orchard", _axis(0), k=3)

    # Then it appears once, carrying both scores
    ids = [hit.doc_id for hit in hits]
    assert len(ids) == len(set(ids))
    orchard = _by_id(hits)["orchard"]
    assert orchard.dense == pytest.approx(1.0, abs=1e-5)
    assert orchard.lexical > 0


def test_the_thread_filter_excludes_other_threads(index: SearchIndex, tenant: str) -> None:
    # Given a perfect match that lives in another thread
    _seed(index, tenant)
    index.upsert([_doc(tenant, "elsewhere", "apples orchard apples", _axis(0), thread="thread-2")])

    # When searching thread-1 only
    hits = index.search(tenant, ["thread-1"], "apples orchard", _axis(0), k=5)

    # Then the other thread's document is not a candidate
    assert "elsewhere" not in _by_id(hits)
    assert "orchard" in _by_id(hits)


def test_several_threads_can_be_searched_at_once(index: SearchIndex, tenant: str) -> None:
    _seed(index, tenant)
    index.upsert([_doc(tenant, "elsewhere", "apples again", _axis(0), thread="thread-2")])

    hits = index.search(tenant, ["thread-1", "thread-2"], "apples", _axis(0), k=5)

    assert {"orchard", "elsewhere"} <= set(_by_id(hits))


def test_an_unknown_thread_finds_nothing(index: SearchIndex, tenant: str) -> None:
    _seed(index, tenant)
    assert index.search(tenant, ["no-such-thread"], "apples", _axis(0), k=5) == []


def test_tenants_never_see_each_others_documents(index: SearchIndex, tenant: str) -> None:
    # Given the same thread and doc id under two tenants, with different content
    other = f"{tenant}-other"
    _seed(index, tenant)
    index.upsert([_doc(other, "orchard", "secret plans of the other tenant", _axis(3))])

    # When each tenant searches for the other's words and direction
    mine = index.search(tenant, ["thread-1"], "secret plans", _axis(3), k=5)
    theirs = index.search(other, ["thread-1"], "apples bicycle concert", _axis(0), k=5)

    # Then each only gets its own documents
    assert set(_by_id(mine)) <= {"orchard", "bicycle", "concert"}
    assert all(hit.lexical == 0 for hit in mine)
    assert [hit.doc_id for hit in theirs] == ["orchard"]
    assert theirs[0].lexical == 0
    assert theirs[0].dense == pytest.approx(0.0, abs=1e-6)


def test_deleting_a_document_removes_it_from_both_retrievers(index: SearchIndex, tenant: str) -> None:
    # Given the orchard document
    _seed(index, tenant)

    # When it is deleted
    index.delete(tenant, ["orchard"])

    # Then neither its words nor its vector find it
    hits = index.search(tenant, ["thread-1"], "apples orchard", _axis(0), k=5)
    assert "orchard" not in _by_id(hits)
    assert set(_by_id(hits)) <= {"bicycle", "concert"}


def test_deleting_unknown_documents_is_harmless(index: SearchIndex, tenant: str) -> None:
    _seed(index, tenant)

    index.delete(tenant, ["never-indexed"])
    index.delete(f"{tenant}-nobody", ["orchard"])

    assert "orchard" in _by_id(index.search(tenant, ["thread-1"], "apples", _axis(0), k=5))


def test_upserting_the_same_id_replaces_the_document(index: SearchIndex, tenant: str) -> None:
    # Given the orchard document
    _seed(index, tenant)

    # When it is upserted again with new words and a new direction
    index.upsert([_doc(tenant, "orchard", "Sailing lessons at the lake", _axis(5))])

    # Then the old words no longer match, the new ones and the new vector do, and it exists once
    old_words = index.search(tenant, ["thread-1"], "apples", _axis(7), k=5)
    assert all(hit.lexical == 0 for hit in old_words)
    hits = index.search(tenant, ["thread-1"], "sailing lake", _axis(5), k=5)
    assert [hit.doc_id for hit in hits].count("orchard") == 1
    assert _by_id(hits)["orchard"].dense == pytest.approx(1.0, abs=1e-5)
    assert _by_id(hits)["orchard"].lexical > 0


def test_k_bounds_each_retrievers_candidates(index: SearchIndex, tenant: str) -> None:
    # Given ten documents that all share a word and lean the same way
    index.upsert(
        [
            _doc(tenant, f"doc-{i}", f"garden note number {i}", _mix(_axis(0), _axis(i % 8), 0.3))
            for i in range(10)
        ]
    )

    # When asking for three candidates per retriever
    hits = index.search(tenant, ["thread-1"], "garden", _axis(0), k=3)

    # Then at most three come from each, six in all
    assert 3 <= len(hits) <= 6
    assert sum(hit.lexical > 0 for hit in hits) >= 3


def test_clearing_one_tenant_keeps_the_others(index: SearchIndex, tenant: str) -> None:
    other = f"{tenant}-other"
    _seed(index, tenant)
    _seed(index, other)

    index.clear(tenant)

    assert index.search(tenant, ["thread-1"], "apples", _axis(0), k=5) == []
    assert index.search(other, ["thread-1"], "apples", _axis(0), k=5) != []


def _turn_doc(
    tenant: str, doc_id: str, memory_id: str, text: str, vector: list[float], thread: str = "thread-1"
) -> IndexDocument:
    turn = {"kind": "turn", "memory_id": memory_id}
    return _doc(tenant, doc_id, text, vector, thread).model_copy(update=turn)


def test_a_search_sees_only_documents_of_the_kind_it_asks_for(index: SearchIndex, tenant: str) -> None:
    # Given a memory document and a turn document of it, both about apples
    _seed(index, tenant)
    index.upsert([_turn_doc(tenant, "orchard:0", "orchard", "apples from the orchard", _axis(0))])

    # When searching each kind with the same words and vector
    memories = _by_id(index.search(tenant, ["thread-1"], "apples", _axis(0), k=5))
    turns = _by_id(index.search(tenant, ["thread-1"], "apples", _axis(0), k=5, kind="turn"))

    # Then each search returns its own kind only
    assert "orchard" in memories and "orchard:0" not in memories
    assert set(turns) == {"orchard:0"}


def test_one_search_of_several_kinds_answers_each_kind_as_its_own_search_would(
    index: SearchIndex, tenant: str
) -> None:
    # Given memory documents and turn documents of them
    _seed(index, tenant)
    index.upsert(
        [
            _turn_doc(tenant, "orchard:0", "orchard", "apples from the orchard", _axis(0)),
            _turn_doc(tenant, "concert:0", "concert", "a loud jazz concert", _axis(2)),
        ]
    )

    # When both kinds are searched in one call, each with its own number of candidates
    found = index.search_kinds(tenant, ["thread-1"], "apples concert", _axis(0), {"memory": 2, "turn": 5})

    # Then each kind's hits are those of a search of that kind alone
    assert set(found) == {"memory", "turn"}
    assert found["memory"] == index.search(tenant, ["thread-1"], "apples concert", _axis(0), k=2)
    turns = index.search(tenant, ["thread-1"], "apples concert", _axis(0), k=5, kind="turn")
    assert found["turn"] == turns
    assert {hit.doc_id for hit in found["turn"]} == {"orchard:0", "concert:0"}


def test_a_search_given_the_questions_terms_finds_what_the_text_alone_finds(
    index: SearchIndex, tenant: str
) -> None:
    # Given memory documents and a turn document
    _seed(index, tenant)
    index.upsert([_turn_doc(tenant, "orchard:0", "orchard", "apples from the orchard", _axis(0))])
    wanted: dict[DocKind, int] = {"memory": 2, "turn": 5}

    # When searched with the question's terms as the engine's analyzer reads them
    terms = tokenize("Apples, concert!")
    given = index.search_kinds(tenant, ["thread-1"], "Apples, concert!", _axis(0), wanted, terms=terms)

    # Then the hits are those of the text alone
    assert given == index.search_kinds(tenant, ["thread-1"], "Apples, concert!", _axis(0), wanted)
    assert given["turn"] and given["memory"]


def test_every_kind_asked_for_has_a_list_even_with_nothing_to_find(index: SearchIndex, tenant: str) -> None:
    # Given memory documents only
    _seed(index, tenant)

    # When memories and turns are searched at once, and a kind with no candidates is asked for
    found = index.search_kinds(tenant, ["thread-1"], "apples", _axis(0), {"memory": 0, "turn": 5})

    # Then both kinds answer, empty
    assert found == {"memory": [], "turn": []}


def test_a_turn_hit_names_the_memory_it_is_part_of(index: SearchIndex, tenant: str) -> None:
    _seed(index, tenant)
    index.upsert([_turn_doc(tenant, "orchard:0", "orchard", "apples from the orchard", _axis(0))])

    turn = index.search(tenant, ["thread-1"], "apples", _axis(0), k=5, kind="turn")[0]
    memory = _by_id(index.search(tenant, ["thread-1"], "apples", _axis(0), k=5))["orchard"]

    assert turn.memory_id == "orchard"
    assert memory.memory_id is None


def test_a_hit_echoes_when_its_document_was_said(index: SearchIndex, tenant: str) -> None:
    # Given a turn said on 8 May 2023 (by lexical and by dense search alike)
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    doc = _turn_doc(tenant, "orchard:0", "orchard", "apples from the orchard", _axis(0))
    index.upsert([doc.model_copy(update={"occurred_at": said})])

    by_words = index.search(tenant, ["thread-1"], "apples", [], k=5, kind="turn")
    by_meaning = index.search(tenant, ["thread-1"], "", _axis(0), k=5, kind="turn")

    # Then both hits carry the date, so retrieval can match a date the question names
    assert [hit.occurred_at for hit in by_words] == [said]
    assert [hit.occurred_at for hit in by_meaning] == [said]


@pytest.mark.parametrize("kind", ["memory", "turn"])
def test_an_event_time_window_keeps_the_hits_said_inside_it(
    index: SearchIndex, tenant: str, kind: str
) -> None:
    # Given the same words said in March and in May, as memories or as turns (issue #45 §3)
    march, may = datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 5, 9, tzinfo=UTC)
    make = _doc if kind == "memory" else lambda t, i, x, v: _turn_doc(t, i, i.split(":")[0], x, v)
    docs = [
        make(tenant, "busan:0", "Mina lives in Busan", _axis(0)).model_copy(update={"occurred_at": march}),
        make(tenant, "seoul:0", "Mina lives in Seoul", _axis(0)).model_copy(update={"occurred_at": may}),
    ]
    index.upsert(docs)
    hits = index.search(tenant, ["thread-1"], "Mina lives", _axis(0), k=5, kind=kind)  # type: ignore[arg-type]

    # When retrieve's window (as_of, since, until) reads what each hit echoes
    def kept(window: Window) -> list[str]:
        return sorted(hit.doc_id for hit in hits if window.admits(hit.occurred_at))

    # Then as_of April keeps March, since April keeps May, an enclosing range keeps both
    april = datetime(2026, 4, 15, tzinfo=UTC)
    assert kept(Window(as_of=april)) == ["busan:0"]
    assert kept(Window(since=april)) == ["seoul:0"]
    assert kept(Window(since=march, until=may)) == ["busan:0", "seoul:0"]


def _a_year_of_days(tenant: str, kind: str) -> list[IndexDocument]:
    """200 documents said a day apart from 1 January 2026; the three of 10-12 April are the
    farthest from the query by meaning and the weakest by words, so a filter applied after the
    top k would find none of them."""
    start, docs = datetime(2026, 1, 1, tzinfo=UTC), []
    for day in range(200):
        said = start + timedelta(days=day)
        inside = 99 <= day <= 101
        text = "hiking trip with my sister in the hills" if inside else "hiking hiking trip"
        vector = _mix(_axis(0), _axis(1), 0.8 if inside else 0.05 + day / 10_000)
        doc_id = f"day-{day:03d}"
        if kind == "memory":
            doc = _doc(tenant, doc_id, text, vector)
        else:
            doc = _turn_doc(tenant, f"{doc_id}:0", doc_id, text, vector)
        docs.append(doc.model_copy(update={"occurred_at": said}))
    return docs


@pytest.mark.parametrize("kind", ["memory", "turn"])
@pytest.mark.parametrize("by", ["meaning", "words", "both"])
def test_an_event_time_range_is_searched_within_so_a_narrow_one_still_fills_k(
    index: SearchIndex, tenant: str, kind: str, by: str
) -> None:
    # Given 200 documents a day apart, three of them said 10-12 April (issue #45)
    docs = _a_year_of_days(tenant, kind)
    index.upsert(docs)
    april = Period(since=datetime(2026, 4, 10, tzinfo=UTC), until=datetime(2026, 4, 12, 23, 59, tzinfo=UTC))

    # When three candidates are asked for within those days
    text = "" if by == "meaning" else "hiking"
    vector = [] if by == "words" else _axis(0)
    hits = index.search(tenant, ["thread-1"], text, vector, k=3, kind=kind, said=april)  # type: ignore[arg-type]

    # Then the index searched inside the range: exactly those three, each said inside it
    assert sorted(hit.doc_id for hit in hits) == sorted(doc.doc_id for doc in docs[99:102])
    assert all(april.holds(hit.occurred_at) for hit in hits)


@pytest.mark.parametrize("kind", ["memory", "turn"])
def test_a_document_is_found_by_a_range_holding_a_day_it_speaks_of(
    index: SearchIndex, tenant: str, kind: str
) -> None:
    # Given "went hiking yesterday" said on 9 May (resolved at write: it speaks of 8 May), beside
    # another hike said on 8 May itself and one said on 20 May
    make = _doc if kind == "memory" else lambda t, i, x, v: _turn_doc(t, f"{i}:0", i, x, v)
    may = [datetime(2026, 5, n, 10, tzinfo=UTC) for n in (9, 8, 20)]
    docs = [
        make(tenant, "yesterday", "went hiking yesterday", _axis(0)),
        make(tenant, "same-day", "went hiking today", _axis(0)),
        make(tenant, "later", "went hiking again", _axis(0)),
    ]
    spoken = [[datetime(2026, 5, 8, tzinfo=UTC)], [], []]
    index.upsert(
        [
            doc.model_copy(update={"occurred_at": said, "spoken_of": days})
            for doc, said, days in zip(docs, may, spoken, strict=True)
        ]
    )

    # When searching 8 May only
    eighth = Period(since=datetime(2026, 5, 8, tzinfo=UTC), until=datetime(2026, 5, 8, 23, 59, tzinfo=UTC))
    hits = index.search(tenant, ["thread-1"], "hiking", _axis(0), k=5, kind=kind, said=eighth)  # type: ignore[arg-type]

    # Then the hike said that day and the one speaking of it are found, the later one is not
    assert sorted(hit.doc_id.split(":")[0] for hit in hits) == ["same-day", "yesterday"]


def test_a_document_without_a_time_is_a_candidate_in_any_range(index: SearchIndex, tenant: str) -> None:
    # Given a fact (no event time) beside a memory said in January
    january = _doc(tenant, "january", "Mina hikes every weekend", _axis(0))
    index.upsert([january.model_copy(update={"occurred_at": datetime(2026, 1, 5, tzinfo=UTC)})])
    index.upsert([_doc(tenant, "fact", "Mina hikes with poles", _mix(_axis(0), _axis(1), 0.3))])

    # When searching within May, with a start, an end, or both
    may, june = datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC)
    for period in (Period(since=may), Period(until=datetime(2025, 12, 1, tzinfo=UTC)), Period(may, june)):
        hits = index.search(tenant, ["thread-1"], "hikes", _axis(0), k=5, said=period)

        # Then the fact is found and the January memory is not
        assert [hit.doc_id for hit in hits] == ["fact"], period


def test_turn_documents_keep_their_own_lexical_statistics(index: SearchIndex, tenant: str) -> None:
    # Given one turn document about kayaks, scored alone
    index.upsert([_turn_doc(tenant, "m1:0", "m1", "kayak trip on the river", _axis(0))])
    alone = index.search(tenant, ["thread-1"], "kayak", _axis(1), k=5, kind="turn")[0].lexical

    # When many memory documents mentioning kayaks are added
    index.upsert([_doc(tenant, f"m{i}", "kayak kayak kayak lessons", _axis(2)) for i in range(2, 12)])
    after = index.search(tenant, ["thread-1"], "kayak", _axis(1), k=5, kind="turn")[0].lexical

    # Then the turn's BM25 score does not change: document frequencies are per kind
    assert after == pytest.approx(alone)


def test_deleting_a_memory_deletes_its_turn_documents(index: SearchIndex, tenant: str) -> None:
    # Given a memory with two turn documents, and another memory's turn document
    _seed(index, tenant)
    index.upsert(
        [
            _turn_doc(tenant, "orchard:0", "orchard", "apples all afternoon", _axis(0)),
            _turn_doc(tenant, "orchard:1", "orchard", "apple pie later", _axis(0)),
            _turn_doc(tenant, "bicycle:0", "bicycle", "apples in my basket", _axis(1)),
        ]
    )

    # When the memory's document is deleted
    index.delete(tenant, ["orchard"])

    # Then its turn documents are gone too, the other memory's stays
    hits = index.search(tenant, ["thread-1"], "apples apple", _axis(0), k=5, kind="turn")
    assert set(_by_id(hits)) == {"bicycle:0"}


def test_a_turn_hit_carries_its_window_cosine_found_by_either_retriever(
    index: SearchIndex, tenant: str
) -> None:
    # Given two turn documents with window vectors, and one without
    window = _mix(_axis(0), _axis(3), 0.5)
    index.upsert(
        [
            _turn_doc(tenant, "m1:0", "m1", "apples in the orchard", _axis(0)).model_copy(
                update={"window_vector": window}
            ),
            _turn_doc(tenant, "m1:1", "m1", "the jazz concert", _axis(2)).model_copy(
                update={"window_vector": _axis(3)}
            ),
            _turn_doc(tenant, "m2:0", "m2", "a bicycle chain", _axis(1)),
        ]
    )

    # When searched with one slot per retriever: m1:0 by meaning, m1:1 by words only
    hits = _by_id(index.search(tenant, ["thread-1"], "jazz concert", _axis(0), k=1, kind="turn"))

    # Then each hit's window cosine is the query's cosine to its window vector
    assert set(hits) == {"m1:0", "m1:1"}
    assert hits["m1:0"].window == pytest.approx(math.sqrt(0.5), abs=2e-3)
    assert hits["m1:1"].window == pytest.approx(0.0, abs=2e-3)
    # and a turn without one has none (nor does a memory document)
    without = index.search(tenant, ["thread-1"], "bicycle", _axis(1), k=1, kind="turn")
    assert [(hit.doc_id, hit.window) for hit in without] == [("m2:0", None)]


def test_a_turn_written_again_without_a_window_vector_loses_it(index: SearchIndex, tenant: str) -> None:
    # Given a turn document with a window vector
    doc = _turn_doc(tenant, "m1:0", "m1", "apples in the orchard", _axis(0))
    index.upsert([doc.model_copy(update={"window_vector": _axis(3)})])
    assert index.search(tenant, ["thread-1"], "apples", _axis(3), k=1, kind="turn")[0].window == (
        pytest.approx(1.0, abs=2e-3)
    )

    # When written again without one (an empty one reads as none), and then deleted through its
    # memory and written back
    index.upsert([doc.model_copy(update={"window_vector": []})])
    cleared = index.search(tenant, ["thread-1"], "apples", _axis(3), k=1, kind="turn")
    index.delete(tenant, ["m1"])
    index.upsert([doc.model_copy(update={"window_vector": _axis(4)})])
    again = index.search(tenant, ["thread-1"], "apples", _axis(4), k=1, kind="turn")

    # Then it had none in between, and has the new one after
    assert [hit.window for hit in cleared] == [None]
    assert again[0].window == pytest.approx(1.0, abs=2e-3)


def test_a_window_vector_of_another_dimension_is_refused_before_anything_is_written(
    index: SearchIndex, tenant: str
) -> None:
    _seed(index, tenant)
    bad = _turn_doc(tenant, "m1:0", "m1", "apples", _axis(0)).model_copy(update={"window_vector": [1.0, 0.0]})

    with pytest.raises(InvalidInput, match="dimension"):
        index.upsert([_turn_doc(tenant, "m2:0", "m2", "pears", _axis(1)), bad])

    assert index.search(tenant, ["thread-1"], "pears apples", _axis(1), k=5, kind="turn") == []


# -- what a settling index shows before it settles (OpenSearch: Serverless 10-30 s, a domain ~1 s)


def test_a_write_shows_only_once_the_index_has_settled(
    settling: tuple[SettlingIndex, _Clock], tenant: str
) -> None:
    index, clock = settling
    assert isinstance(index, EventuallyConsistent) and index.settle_seconds == SETTLE
    index.upsert([_doc(tenant, "orchard", "apples in the orchard", _axis(0))])

    clock.now += SETTLE - 1
    assert index.search(tenant, ["thread-1"], "apples", _axis(0), k=5) == []
    clock.now += 1
    assert [hit.doc_id for hit in index.search(tenant, ["thread-1"], "apples", _axis(0), k=5)] == ["orchard"]


def test_a_delete_right_after_a_write_misses_the_copy_until_it_is_sent_again(
    settling: tuple[SettlingIndex, _Clock], tenant: str
) -> None:
    # Given a document deleted before the index showed it
    index, clock = settling
    index.upsert([_doc(tenant, "orchard", "apples in the orchard", _axis(0))])
    index.delete(tenant, ["orchard"])

    # When the index settles, the copy the delete missed shows
    clock.now += SETTLE
    assert [hit.doc_id for hit in index.search(tenant, ["thread-1"], "apples", _axis(0), k=5)] == ["orchard"]

    # Then the second delete (usecases.index_purge) removes it
    index.delete(tenant, ["orchard"])
    assert index.search(tenant, ["thread-1"], "apples", _axis(0), k=5) == []


def test_a_rewritten_document_answers_as_before_until_the_rewrite_settles(
    settling: tuple[SettlingIndex, _Clock], tenant: str
) -> None:
    index, clock = settling
    index.upsert([_doc(tenant, "note", "apples in the orchard", _axis(0))])
    clock.now += SETTLE
    index.upsert([_doc(tenant, "note", "a broken bicycle chain", _axis(1))])

    [before] = index.search(tenant, ["thread-1"], "", _axis(0), k=1)
    clock.now += SETTLE
    [after] = index.search(tenant, ["thread-1"], "", _axis(0), k=1)

    assert before.dense == pytest.approx(1.0, abs=1e-5)
    assert after.dense == pytest.approx(0.0, abs=1e-5)
