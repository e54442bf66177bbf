"""What embedding may cost: every embedder behind one bound, and where its work may stop.

`wiring.build_embedder` wraps whichever model it builds (e5 or MiniLM on ONNX Runtime, the remote
Lambda or SageMaker one) in a `BoundedEmbedder`, so the bound is the same everywhere
and lives in one place:

- each text is embedded from its first `max_chars` characters (MEMORY_ENGINE_EMBED_MAX_CHARS),
  counted in the NFKC form the tokenizers read, as sentence-transformers truncates at a model's
  length. e5 would otherwise cut a long text into 510-token windows and average them all:
  100,000 characters took 32 s of CPU. Neither tokenizer gives much more than one token per
  character of that form (sentencepiece without byte fallback: at most ~1.1 on adversarial
  text, `tests/contract/test_embedding_cost.py`; WordPiece: at most one), so the cap bounds the
  tokens, and e5's windows, of these models. EmbeddingGemma's tokenizer gives up to ~4 (byte
  fallback on emoji and rare scripts), so its encoder cuts each text to one token per character
  by its own count (`adapters.local.gemma.token_cap`). The text itself is stored and matched by words
  whole; only its vector reads the head.
- texts go to the model in chunks of about `chunk_chars` characters, and the current deadline
  (`memory_engine.deadline`) is checked before each: a request whose client left, or a worker
  that is stopping, stops within one chunk.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence

from memory_engine import deadline
from memory_engine.ports import CopyableEmbedder, Embedder, EmbedMode

# Characters per call to the model between two deadline checks: two texts at the cap, 2-4 e5
# windows (about 0.2 s on 2 idle cores, a few seconds on busy ones); e5 runs one window per call
# anyway, so smaller calls cost nothing but the checks.
CHUNK_CHARS = 4_096
# The most characters one character becomes in NFKC form (U+FDFA).
MAX_NFKC_GROWTH = 18


def capped(text: str, max_chars: int) -> str:
    """The part of `text` that is embedded: its head, of at most `max_chars` characters once in
    NFKC form (what the tokenizers read: one "ﷺ" is 18 characters there, and 4 e5 tokens)."""
    if len(text) * MAX_NFKC_GROWTH <= max_chars:
        return text
    head = text[:max_chars]
    while (grown := len(unicodedata.normalize("NFKC", head))) > max_chars:
        head = head[: len(head) * max_chars // grown]
    return head


def embedded_chars(texts: Sequence[str], max_chars: int) -> int:
    """How many characters embedding `texts` costs once each is capped."""
    return sum(min(len(text), max_chars) for text in texts)


class BoundedEmbedder:
    """The `Embedder` port over another one, with texts capped and the deadline checked."""

    def __init__(self, inner: Embedder, max_chars: int, chunk_chars: int = CHUNK_CHARS) -> None:
        if max_chars < 1 or chunk_chars < 1:
            raise ValueError("max_chars and chunk_chars must be positive")
        self.inner = inner
        self.max_chars = max_chars
        self._chunk_chars = chunk_chars

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        vectors: list[list[float]] = []
        for chunk in self._chunks([capped(text, self.max_chars) for text in texts]):
            deadline.check()
            vectors.extend(self.inner.embed(chunk, mode))
        return vectors

    def _chunks(self, texts: list[str]) -> Iterator[list[str]]:
        chunk: list[str] = []
        size = 0
        for text in texts:
            if chunk and size + len(text) > self._chunk_chars:
                yield chunk
                chunk, size = [], 0
            chunk.append(text)
            size += len(text)
        if chunk:
            yield chunk

    def clone(self) -> BoundedEmbedder:
        """The inner model's own copy, under the same bound (see OnnxEmbedder.clone); this very
        embedder when the model has no copy to give."""
        if not isinstance(self.inner, CopyableEmbedder):
            return self
        return BoundedEmbedder(self.inner.clone(), self.max_chars, self._chunk_chars)
