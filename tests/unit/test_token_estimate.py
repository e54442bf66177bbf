"""The token estimate never undercounts numbers, ids, keys and codes, checked against the two
tokenizers it stands in for (e5's, the default embedder's, and MiniLM's WordPiece), and counts
plain words as it always did."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from bench.token_estimate import kinds
from memory_engine.retrieval.tokens import count_tokens, word_tokens

# The kinds the estimate answers for; "mixed-case codes" includes strings shaped like a capitalised
# word (`Abcdefg`), which it reads as one (bench/token_estimate.py reports that share).
CODES = [kind for kind in kinds(random.Random(0)) if kind != "mixed-case codes"]
SAMPLES = 150


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, Callable[[list[str]], list[int]]]:
    from tokenizers import Tokenizer

    from memory_engine.adapters.local.e5_file import E5File, E5Tokenizer, packaged_bin
    from memory_engine.adapters.local.encoders import packaged_minilm_dir as packaged_model_dir

    e5 = E5Tokenizer(E5File(packaged_bin()))
    wordpiece = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
    wordpiece.no_truncation()
    wordpiece.no_padding()
    return {
        "e5": lambda texts: [len(ids) for ids in e5.ids_batch(texts)],
        "wordpiece": lambda texts: [
            len(e.ids) for e in wordpiece.encode_batch(texts, add_special_tokens=False)
        ],
    }


@pytest.mark.parametrize("kind", CODES)
def test_numbers_ids_keys_and_codes_are_never_undercounted(
    tokenizers: dict[str, Callable[[list[str]], list[int]]], kind: str
) -> None:
    # Given random strings of one kind (a fixed seed per kind)
    make = kinds(random.Random(f"test-{kind}"))[kind]
    texts = [make() for _ in range(SAMPLES)]
    # When each is counted by the estimate and by both tokenizers
    estimated = [count_tokens(text) for text in texts]
    # Then the estimate is never below either tokenizer's count
    for name, count in tokenizers.items():
        under = [(t, e, r) for t, e, r in zip(texts, estimated, count(texts), strict=True) if e < r]
        assert under == [], f"{name} counts more than the estimate: {under[:3]}"


def test_a_ten_digit_number_and_base64_count_a_token_per_character() -> None:
    assert count_tokens("1683554160") == 10  # words alone: 2
    assert count_tokens("aGVsbG8gd29ybGQ=") == 16  # words alone: 3
    assert count_tokens("order 20260318_040037_d60e66 shipped") == 1 + 22 + 1


def test_plain_words_count_as_words_alone_did() -> None:
    text = "Caroline: I went to the LGBTQ support group yesterday and it was so powerful."

    assert count_tokens(text) == word_tokens(text) + len("LGBTQ") - 1  # only the capitals' run differs
    assert count_tokens("제 강아지 이름은 후추예요.") == word_tokens("제 강아지 이름은 후추예요.")
