"""EmbeddingGemma's per-text token cap (`adapters.local.gemma.token_cap`): the engine's embed bounds
count characters, so no text may cost the model more tokens than characters, nor more than its
context (the real tokenizer's side: tests/contract/test_gemma_embedder.py)."""

from __future__ import annotations

from memory_engine.adapters.local.gemma import MAX_TOKENS, token_cap


def test_a_text_of_many_tokens_per_character_is_cut_to_one_token_per_character_after_its_prompt() -> None:
    # Given 10 emoji the tokenizer made 40 tokens of, behind a prompt of 6
    ids = list(range(6 + 40))

    # Then it keeps its prompt and 10 tokens
    assert token_cap(ids, chars=10, prompt_tokens=6) == ids[:16]


def test_no_text_passes_the_models_context_whatever_its_length() -> None:
    ids = list(range(10_000))

    assert len(token_cap(ids, chars=5_000, prompt_tokens=6)) == MAX_TOKENS == 2_048


def test_ordinary_text_of_fewer_tokens_than_characters_is_left_whole() -> None:
    ids = list(range(6 + 120))  # ~0.25 tokens per character: English

    assert token_cap(ids, chars=480, prompt_tokens=6) == ids


def test_an_empty_text_keeps_its_prompt() -> None:
    assert token_cap([1, 2, 3], chars=0, prompt_tokens=3) == [1, 2, 3]
