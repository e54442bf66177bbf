"""Issue #45 §1: the built-in extractors read which one-value fact a statement states beyond
residence and job (relationships, pets, preferences, plans, health, possessions), in English and
Korean; statements of history or about someone else state none."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.extraction.fact_slots import slot_of
from memory_engine.models.domain import Turn
from memory_engine.ports import ExtractionContext


@pytest.mark.parametrize(
    ("sentence", "slot"),
    [
        ("I'm dating a guy named Theo.", "relationship"),
        ("We broke up last week.", "relationship"),
        ("I got married in June!", "relationship"),
        ("여자친구가 생겼어.", "relationship"),
        ("민지랑 헤어졌어.", "relationship"),
        ("We adopted a puppy named Bori.", "pet:dog"),
        ("My dog Max passed away.", "pet:dog"),
        ("강아지를 입양했어.", "pet:dog"),
        ("I have a cat named Luna.", "pet:cat"),
        ("고양이를 키우기 시작했어.", "pet:cat"),
        ("My favorite food is ramen.", "preference:food"),
        ("제일 좋아하는 음식은 떡볶이야.", "preference:음식"),
        ("I'm vegetarian now.", "preference:diet"),
        ("요즘 채식을 시작했어.", "preference:diet"),
        ("Our trip to Japan got cancelled.", "plan:trip"),
        ("We're going to Lisbon next month.", "plan:trip"),
        ("일본 여행은 취소됐어.", "plan:trip"),
        ("I'm planning to move to Daegu.", "plan:move"),
        ("I broke my leg skiing.", "health"),
        ("감기에 걸렸어.", "health"),
        ("다리가 다 나았어.", "health"),
        ("I just bought a used Hyundai sedan.", "possession:car"),
        ("차를 팔았어.", "possession:car"),
        ("나는 오래된 아반떼를 타는데 요즘 이상한 소리가 나.", "possession:car"),
        ("I switched to an iPhone.", "possession:phone"),
        ("I got a new job as a baker.", "job"),
        ("I used to have a dog.", None),
        ("My sister moved to Porto.", None),
        ("The weather was lovely.", None),
    ],
)
def test_which_sentences_state_a_one_value_fact_beyond_residence_and_job(
    sentence: str, slot: str | None
) -> None:
    assert slot_of(sentence) == slot


def test_a_new_cat_does_not_replace_the_dog_nor_a_phone_the_car() -> None:
    assert slot_of("We adopted a kitten.") != slot_of("I have a dog named Max.")
    assert slot_of("I bought a new phone.") != slot_of("I bought a new car.")


@pytest.mark.parametrize("city", ["Lisbon", "Kyoto", "Tbilisi", "Oaxaca"])
def test_a_place_given_as_a_short_answer_to_where_is_a_place_not_a_person(city: str) -> None:
    # Given a chat where the assistant asks which city and the user answers "Mostly <city>."
    at = datetime(2026, 5, 1, tzinfo=UTC)
    lines = [
        ("I just got back from a trip.", "Welcome back! Which city did you visit?"),
        (f"Mostly {city}.", "How was it?"),
        ("The food was amazing.", ""),
    ]
    turns = [
        Turn(
            tenant="t",
            session_uuid="s",
            dialog_uuid=f"d{i}",
            seq=i,
            query=q,
            answer=a,
            user_name="Jun",
            timestamp=at,
            created_at=at,
        )
        for i, (q, a) in enumerate(lines)
    ]

    # When the built-in extractor reads it
    fields = BuiltinExtractor().extract(turns, ExtractionContext(user_name="Jun", language="en")).fields

    # Then the city is the place, and no character
    assert city not in fields.characters
    assert city in fields.location
