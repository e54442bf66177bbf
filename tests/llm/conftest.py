"""Fixtures: a fake OpenAI-compatible server per test, and extractors pointed at it with a fake sleep."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memory_engine.adapters.openai.llm_extractor import LlmExtractor, chat_client
from tests.fakes.openai_server import FakeOpenAIServer
from tests.llm.builders import MODEL


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_extractor(server: FakeOpenAIServer, sleeps: list[float]) -> Callable[..., LlmExtractor]:
    # The adapter needs the `llm` extra; without it the tests using it skip, the others still run.
    pytest.importorskip("openai")
    from memory_engine.adapters.openai.client import RetryPolicy

    def make(**options: Any) -> LlmExtractor:
        options.setdefault("timeout_s", 5.0)
        return LlmExtractor(
            chat_client()(
                model=MODEL,
                base_url=server.base_url,
                api_key="test-key",
                sleep=sleeps.append,
                retry=options.pop("retry", RetryPolicy()),
                **options,
            )
        )

    return make
