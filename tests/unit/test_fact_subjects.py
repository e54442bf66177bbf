"""Issue #45: a key fact states a one-value fact of a character in the shapes extractors write it:
the built-in extractor's speaker line, and an LLM's third-person sentence (the facts below are the
local model's, Qwen2.5-Coder-1.5B, from bench/.cache/fact_updates_llm and tests/llm/recorded/), in
English and Korean."""

from __future__ import annotations

import pytest

from memory_engine.extraction.fact_subjects import stated


@pytest.mark.parametrize(
    ("fact", "characters", "expected"),
    [
        ("Mina: I moved to Seoul last week.", ["Mina"], ("residence", "Mina")),
        ("Mina moved to Seoul last week for a new job.", ["Mina", "Jae"], ("residence", "Mina")),
        ("Mina lives in Busan with her parents.", ["Mina"], ("residence", "Mina")),
        ("Jae quit his job as a barista.", ["Jae"], ("job", "Jae")),
        ("Jae got a new job as a graphic designer at an ad agency.", ["Jae"], ("job", "Jae")),
        (
            "Leo is dating Sofia and met at a concert in December.",
            ["Hana", "Leo", "Sofia"],
            ("relationship", "Leo"),
        ),
        ("Leo and Sofia broke up last month.", ["Leo", "Sofia"], ("relationship", "Leo")),
        ("Hana's favorite food is pizza now.", ["Hana"], ("preference:food", "Hana")),
        ("Hana's trip to Japan got cancelled.", ["Hana"], ("plan:trip", "Hana")),
        ("Mina adopted a puppy named Bori.", ["Mina"], ("pet:dog", "Mina")),
        ("미나는 부모님과 부산에 산다.", ["미나"], ("residence", "미나")),
        ("미나는 서울로 이사했다.", ["미나"], ("residence", "미나")),
        ("지훈이가 회사를 그만뒀어.", ["지훈"], ("job", "지훈")),
        ("미나의 강아지가 죽었다.", ["미나"], ("pet:dog", "미나")),
        (
            "지수는 오늘 드디어 강아지 입양했고, 보리라는 이름으로 시작.",
            ["지수", "보리"],
            ("pet:dog", "지수"),
        ),
        ("미나는 지난주에 보리라는 강아지를 입양했어, 진돗개 믹스야.", ["재현", "미나"], ("pet:dog", "미나")),
        ("지수: 서울 집은 마포구 망원동이야.", ["지수"], None),
    ],
)
def test_a_fact_opening_with_a_characters_name_is_read_as_that_characters_statement(
    fact: str, characters: list[str], expected: tuple[str, str] | None
) -> None:
    assert stated(fact, characters) == expected


@pytest.mark.parametrize(
    ("fact", "characters"),
    [
        ("Mina's sister lives in Porto.", ["Mina"]),
        ("Mina lived in Busan before.", ["Mina"]),
        ("Jae found it interesting that Mina moved to Seoul.", ["Mina", "Jae"]),
        ("미나는 언니는 부산에 살아.", ["미나"]),
        ("미나는 예전에 부산에 살았어.", ["미나"]),
    ],
)
def test_someone_elses_fact_or_a_past_one_states_nothing(fact: str, characters: list[str]) -> None:
    assert stated(fact, characters) is None


def test_a_name_is_matched_whole_and_an_unnamed_statement_has_no_character() -> None:
    # "Minato" is not "Mina"; a first-person fact without a speaker names no one
    assert stated("Minato lives in Tokyo.", ["Mina"]) is None
    assert stated("We're planning a trip to Japan in April, Osaka and Kyoto.", ["Hana", "Leo"]) == (
        "plan:trip",
        "",
    )
