"""Korean on OpenSearch: the index analyses text with nori the way the local analyzer does, and a
Korean query is analysed by the same path as the documents it should find."""

from __future__ import annotations

from typing import Any

from memory_engine.adapters.aws import opensearch_bodies as bodies
from memory_engine.adapters.aws.opensearch_index import OpenSearchIndex
from memory_engine.retrieval.text import STOP_WORDS
from tests.fakes.opensearch import StubCluster, hits

TENANT = "tenant-a"


def nori_settings() -> dict[str, Any]:
    return bodies.index_body(384)["settings"]["analysis"]


def test_both_text_fields_are_analysed_by_the_nori_chain() -> None:
    body = bodies.index_body(384)
    properties = body["mappings"]["properties"]
    chain = nori_settings()["analyzer"][bodies.TEXT_ANALYZER]

    assert properties["text"]["analyzer"] == properties["turn_text"]["analyzer"] == bodies.TEXT_ANALYZER
    assert chain["tokenizer"] == "memory_nori"
    assert chain["filter"][:2] == ["memory_nori_pos", "nori_readingform"]


def test_nori_keeps_compounds_whole_and_as_parts() -> None:
    assert nori_settings()["tokenizer"]["memory_nori"]["decompound_mode"] == "mixed"


def test_nori_drops_particles_endings_and_suffixes_but_keeps_nouns_and_predicates() -> None:
    stoptags = set(nori_settings()["filter"]["memory_nori_pos"]["stoptags"])

    # Particles (J), endings (E), the suffix of 님 (XSN), the bound noun 씨 (NNB) go
    assert {"J", "E", "XSN", "NNB"} <= stoptags
    # Nouns, proper nouns, verbs, adjectives, adverbs and foreign words stay
    assert not {"NNG", "NNP", "VV", "VA", "MAG", "SL", "SN"} & stoptags


def test_english_words_in_the_nori_chain_meet_the_local_analyzers_stop_words_and_stems() -> None:
    analysis = nori_settings()
    chain = analysis["analyzer"][bodies.TEXT_ANALYZER]["filter"]

    assert analysis["filter"]["memory_english_stop"]["stopwords"] == sorted(STOP_WORDS)
    assert chain[-3:] == ["lowercase", "memory_english_stop", "porter_stem"]


def test_a_korean_query_searches_the_nori_analysed_field_of_its_kind() -> None:
    # Given an index answering with nothing
    cluster = StubCluster(msearch_answers=[[hits([]), hits([]), hits([])]])
    index = OpenSearchIndex(url="https://stub", dimension=2, service="aoss", client=cluster.client())

    # When a Korean question is searched over turn documents
    index.search(TENANT, ["thread-1"], "지훈이는 뭘 못 먹어?", [1.0, 0.0], k=5, kind="turn")

    # Then BM25 runs over the turn text, which nori analysed at index time, with the query as said
    lexical = cluster.sent("_msearch")[0].bodies[3]
    assert lexical["query"]["bool"]["must"] == [{"match": {"turn_text": {"query": "지훈이는 뭘 못 먹어?"}}}]
