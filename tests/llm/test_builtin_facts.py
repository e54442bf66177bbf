"""extract_facts_builtin: short facts without an LLM, merged with what is stored."""

from __future__ import annotations

from memory_engine.extraction.fact_extractor import (
    BuiltinFactExtractor,
    FactExtractor,
    FactOperation,
    extract_facts_builtin,
)


def test_a_repeated_fact_is_kept_not_duplicated() -> None:
    # Given a stored fact
    existing = [("m1", "I live in Seoul.")]
    # When the user says it again, with a new fact
    operations = extract_facts_builtin(["i live in Seoul! I have a dog named Max."], existing, "en")
    # Then the stored one is kept and only the new one is added
    assert operations == [
        FactOperation(op="keep", id="m1", fact="I live in Seoul."),
        FactOperation(op="add", fact="I have a dog named Max."),
    ]


def test_a_changed_detail_updates_the_stored_fact() -> None:
    # Given a stored favourite colour
    existing = [("m1", "My favorite color is blue."), ("m2", "I have a dog named Max.")]
    # When the user names another one
    operations = extract_facts_builtin(["My favorite color is green."], existing, "en")
    # Then that fact is updated with the new wording; the other is untouched
    assert operations == [FactOperation(op="update", id="m1", fact="My favorite color is green.")]


def test_questions_small_talk_and_repeats_within_the_messages_are_not_facts() -> None:
    # Given messages with a greeting, a question and one fact said twice
    messages = [
        "안녕하세요!",
        "내일 날씨 어때?",
        "저는 다음 달에 제주도로 이사 가요.",
        "저는 다음 달에 제주도로 이사 가요!",
    ]
    # When facts are extracted with nothing stored
    operations = extract_facts_builtin(messages, [], "ko")
    # Then one fact is added, in the user's words (a planned move is a one-value fact: the later
    # of two statements of it is the one kept)
    assert operations == [FactOperation(op="add", fact="저는 다음 달에 제주도로 이사 가요!")]


def test_the_builtin_extractor_is_a_fact_extractor() -> None:
    # Given the built-in extractor used where a FactExtractor is expected
    extractor: FactExtractor = BuiltinFactExtractor()
    # When it extracts from a message with nothing stored
    operations = extractor.extract_facts(["My sister works as a nurse in Daegu."], []).operations
    # Then it adds the sentence
    assert operations == [FactOperation(op="add", fact="My sister works as a nurse in Daegu.")]
