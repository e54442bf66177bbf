"""bench.llm_quality: what the LLM extraction benchmark counts in one answer."""

from __future__ import annotations

from typing import Any

from bench import llm_quality
from memory_engine.extraction.schema import MemoryOut


def _out(**fields: Any) -> MemoryOut:
    answer: dict[str, Any] = {
        "summary": "Maya adopted Biscuit. Sheldon is not impressed.",
        "keywords": ["beagle", "Biscuit"],
        "key_facts": [{"turn": 1, "fact": "Maya adopted a beagle named Biscuit."}],
        "key_dialogue": [{"speaker": "Maya", "quote": "His name is Biscuit."}],
        "intent": "Maya wants advice.",
        "location": "",
        "characters": [{"name": "Maya", "aliases": []}],
    }
    return MemoryOut.model_validate(answer | fields)


def test_an_answer_inside_every_bound_is_within_its_limits_and_names_its_empty_fields() -> None:
    limits = llm_quality.limits(_out())

    assert limits["within"] is True
    assert limits["empty"] == ["location"]
    assert (limits["keywords"], limits["key_facts"], limits["summary_sentences"]) == (2, 1, 2)


def test_five_quotes_of_one_character_are_over_the_limit() -> None:
    quotes = [{"speaker": "Maya", "quote": f"line {n}"} for n in range(5)]

    limits = llm_quality.limits(_out(key_dialogue=quotes))

    assert limits["max_quotes_per_character"] == 5 and limits["within"] is False


def test_sixty_six_keywords_are_over_the_limit() -> None:
    assert llm_quality.limits(_out(keywords=[f"k{n}" for n in range(66)]))["within"] is False


def test_the_hangul_share_counts_letters_only() -> None:
    assert llm_quality.hangul_share("지수는 보리를 입양했다. 2024!") == 1.0
    assert llm_quality.hangul_share("지수 adopted") == 2 / 9
    assert llm_quality.hangul_share("2024 !") is None


def test_a_paraphrased_fact_is_grounded_and_an_invented_one_is_not() -> None:
    # Given the turns of a batch
    turns = ["Maya: I finally adopted a beagle yesterday! His name is Biscuit."]
    # When a paraphrase and an invention are checked
    counts = llm_quality.grounding(
        ["Maya adopted a beagle called Biscuit.", "Maya is a single mother of three."],
        ["Maya: His name is Biscuit.", "assistant: I love cats."],
        turns,
    )
    # Then only the paraphrase and the real quote count as grounded
    assert counts == {"facts": 2, "facts_grounded": 1, "quotes": 2, "quotes_grounded": 1}


def test_a_korean_fact_in_other_endings_is_grounded() -> None:
    turns = ["지수: 오늘 드디어 강아지 입양했어! 이름은 보리야."]

    counts = llm_quality.grounding(["지수는 강아지 보리를 입양했다."], [], turns)

    assert counts["facts_grounded"] == 1


def test_characters_found_by_name_alias_or_a_longer_form_all_match() -> None:
    # Given the people of a conversation and the model's characters
    expected = {"지수": [], "지훈": ["지훈이"], "김 원장": ["김 원장님"]}
    found = {"지수": [], "지훈이": ["동생"], "김 원장님 (수의사)": []}
    # When they are compared
    result = llm_quality.characters(found, expected, ["assistant"])
    # Then every person is matched once
    assert result["matched"] == 3 and result["missing"] == [] and result["extra"] == []


def test_two_characters_for_one_person_are_a_split_and_a_place_is_an_extra() -> None:
    expected = {"Tom": ["Tommy"], "Maya": []}
    found = {"Tom": [], "Tommy": [], "Maya": [], "Iceland": [], "assistant": []}

    result = llm_quality.characters(found, expected, ["assistant"])

    assert result["split"] == ["Tom"]
    assert result["extra"] == ["Iceland"]
    assert result["missing"] == []


def test_a_character_whose_aliases_name_two_people_is_conflated() -> None:
    # Given the registry's merge of every character that had the alias "none" (issue #34)
    expected = {"Maya": [], "Tom": [], "Priya": []}
    found = {"Maya": ["none", "Tom", "Priya"]}

    result = llm_quality.characters(found, expected)

    assert result["conflated"] == ["Maya"]
    assert result["missing"] == ["Tom", "Priya"]
