"""What one text can cost the real e5 model behind the engine's cap: at most a handful of
510-token windows, whatever the text (issue #33 §1: 100,000 characters were ~50 windows, 32 s)."""

from __future__ import annotations

import math
import random
import string
from typing import Any

import pytest

from memory_engine.adapters.local.e5_file import E5Tokenizer
from memory_engine.adapters.local.encoders import E5Encoder
from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder
from memory_engine.embedding import BoundedEmbedder, capped

CAP = 2048
WINDOW = 510
random.seed(33)
ADVERSARIAL = {
    "english": "We talked about the harbour and the boats. " * 2500,
    "korean": "민지는 오늘 학교에서 친구들과 도서관에 갔다. " * 4000,
    "digits": "".join(random.choice(string.digits) for _ in range(100_000)),
    "base64": "".join(random.choice(string.ascii_letters + string.digits + "+/") for _ in range(100_000)),
    "emoji": "".join(chr(random.randint(0x1F300, 0x1FAFF)) for _ in range(50_000)),
    "compatibility": "\ufdfa\u3200\u3392" * 20_000,  # grow to 18, 3 and 3 characters in NFKC form
    "combining": "e\u0303\u0301" * 30_000,
    "any": "".join(chr(random.randint(0x20, 0xD7FF)) for _ in range(100_000)),
}


@pytest.fixture(scope="module")
def model() -> OnnxEmbedder:
    return OnnxEmbedder("e5")


@pytest.fixture(scope="module")
def tokenizer(model: OnnxEmbedder) -> E5Tokenizer:
    encoder, _ = model._load()
    assert isinstance(encoder, E5Encoder)
    return encoder.tokenizer  # the process's one copy (~300 MB), shared by every e5 session


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_a_capped_text_is_at_most_about_one_e5_token_per_character(tokenizer: E5Tokenizer, name: str) -> None:
    prefix = len(tokenizer.ids_batch(["passage: "])[0])

    tokens = len(tokenizer.ids_batch(["passage: " + capped(ADVERSARIAL[name], CAP)])[0]) - prefix

    assert tokens <= 1.1 * CAP + 2


class CountingSession:
    """An ONNX Runtime session that counts the windows (batch rows) it is asked to encode."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.windows = 0

    def run(self, outputs: Any, feed: dict[str, Any]) -> Any:
        self.windows += int(feed["attention_mask"].shape[0])
        return self.inner.run(outputs, feed)


def test_a_100000_character_text_costs_e5_at_most_five_windows(model: OnnxEmbedder) -> None:
    # Given e5 on ONNX Runtime behind the engine's cap, its session counting windows
    encoder, inner = model._load()
    session = CountingSession(inner)
    model._loaded = (encoder, session)
    bounded = BoundedEmbedder(model, max_chars=CAP)

    # When each adversarial text of 50,000-100,000 characters is embedded
    windows = {}
    for name, text in ADVERSARIAL.items():
        before = session.windows
        bounded.embed([text])
        windows[name] = session.windows - before

    # Then none cost more than ceil(1.1 × 2,048 / 510) = 5 windows
    assert max(windows.values()) <= math.ceil((1.1 * CAP + 2) / WINDOW), windows
