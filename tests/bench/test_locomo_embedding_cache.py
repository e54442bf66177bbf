"""The harness's on-disk embedding cache: a long fill (EmbeddingGemma on CPU, over an hour) keeps
what it embedded when it stops midway, and two runs sharing the file do not erase each other."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from pathlib import Path

from bench.quality.locomo.engine_run import CachingEmbedder
from memory_engine.ports import EmbedMode


class Counting:
    """A fake model: a text's vector is its length; the calls it got are kept."""

    dimension = 1

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(text))] for text in texts]


def _saved(path: Path) -> dict[tuple[str, str], list[float]]:
    with path.open("rb") as saved:
        loaded: dict[tuple[str, str], list[float]] = pickle.load(saved)
    return loaded


def test_a_long_call_is_embedded_in_chunks_and_saved_as_it_goes(tmp_path: Path) -> None:
    # Given a cache that saves whenever it may (save_every 0) and a call of 40 texts
    path = tmp_path / "embeddings-fake.pkl"
    model = Counting()
    cache = CachingEmbedder(model, path, save_every=0)
    texts = [f"text {n}" for n in range(40)]

    # When it embeds them (and is never asked to save)
    vectors = cache.embed(texts)

    # Then the model got chunks, and the file already holds every vector
    assert vectors == [[float(len(text))] for text in texts]
    assert max(len(call) for call in model.calls) == CachingEmbedder.CHUNK
    assert set(_saved(path)) == {("passage", text) for text in texts}


def test_saving_keeps_what_another_run_wrote_to_the_same_file(tmp_path: Path) -> None:
    # Given two runs that loaded the same cache file, each embedding other texts
    path = tmp_path / "embeddings-fake.pkl"
    first = CachingEmbedder(Counting(), path)
    second = CachingEmbedder(Counting(), path)
    first.embed(["from the first run"])
    second.embed(["from the second run"], "query")

    # When both save, one after the other
    first.save()
    second.save()

    # Then the file holds both runs' vectors, and a new run embeds neither again
    assert set(_saved(path)) == {("passage", "from the first run"), ("query", "from the second run")}
    model = Counting()
    CachingEmbedder(model, path).embed(["from the first run"])
    assert model.calls == []
