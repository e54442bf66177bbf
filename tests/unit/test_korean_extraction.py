"""The built-in extractor on Korean: names with their suffixes are one character, speakers are
named, quotes and facts stay Korean."""

from __future__ import annotations

import pytest

from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.extraction.characters import resolve_names
from memory_engine.extraction.keywords import terms
from memory_engine.extraction.names import addressee, scan_names
from memory_engine.ports import ExtractionContext
from tests.unit.test_builtin_extractor import make_turn

KO = ExtractionContext(user_name="당신", language="ko")


def test_a_name_its_familiar_form_and_its_honorific_forms_are_one_character() -> None:
    # Given 지훈 called three ways, and 민지 with the polite 님
    names = ["지훈이", "지훈 씨", "지훈", "지훈씨", "민지 님", "민지"]

    # When the names are resolved
    resolved = resolve_names(names)

    # Then each person has one canonical name: the bare name
    assert {resolved[name] for name in names[:4]} == {"지훈"}
    assert {resolved[name] for name in names[4:]} == {"민지"}


def test_a_three_syllable_full_name_still_answers_to_its_given_name() -> None:
    assert resolve_names(["김철수", "철수"]) == {"김철수": "김철수", "철수": "김철수"}


@pytest.mark.parametrize(
    ("sentence", "called"),
    [
        ("지훈아, 진짜 오랜만이다!", "지훈"),
        ("하루야, 오늘 좀 힘들었어.", "하루"),
        ("하루 씨, 안녕하세요.", "하루"),
        ("민지 님, 많이 속상하셨겠어요.", "민지"),
        ("Luna, are you there?", "Luna"),
        ("아니야, 괜찮아.", None),
        ("그래야, 맞지.", None),
        ("지훈야, 이상한 호칭", None),  # 야 after a final consonant is not how a name is called
        ("Okay, fine.", None),
    ],
)
def test_whom_a_sentence_calls_by_name(sentence: str, called: str | None) -> None:
    assert addressee(sentence) == called


def test_vocatives_and_spaced_honorifics_name_people_but_titles_do_not() -> None:
    scan = scan_names(["지훈아, 오랜만!", "민지 님, 안녕하세요.", "선생님이 그러셨어.", "아니야, 괜찮아."])

    assert scan.persons == ["지훈", "민지"]


def test_the_name_the_user_calls_the_assistant_by_is_the_assistant_not_another_character() -> None:
    # Given answers without an npc id, and a user who calls the companion by name
    turns = [
        make_turn(0, "하루야, 나 오늘 회사에서 혼났어.", "민지 님, 많이 속상하셨겠어요.", user="민지"),
        make_turn(1, "보고서 마감을 놓쳤거든.", "저런, 따뜻한 차 한잔 어떠세요?", user="민지"),
    ]

    # When the batch is extracted
    fields = BuiltinExtractor().extract(turns, KO).fields

    # Then the answers are the assistant's, under the label the turns' own text gives it
    assert fields.characters == ["민지", "assistant"]
    assert 'assistant: "민지 님, 많이 속상하셨겠어요."' in fields.key_dialogue
    assert "하루" not in fields.characters
    assert "assistant" not in fields.keywords


def test_an_unnamed_assistant_is_assistant_in_korean_and_english_alike() -> None:
    korean = BuiltinExtractor().extract([make_turn(0, "오늘 비가 많이 왔어.", "우산 챙기셨어요?")], KO).fields
    english = (
        BuiltinExtractor()
        .extract(
            [make_turn(0, "It rained all day.", "Did you take an umbrella?")],
            ExtractionContext(language="en"),
        )
        .fields
    )

    assert korean.characters == ["Caroline", "assistant"]
    assert english.characters == ["Caroline", "assistant"]
    assert "AI:" not in korean.summary


def test_a_korean_batch_keeps_its_facts_and_quotes_in_korean_with_particles_off_keywords() -> None:
    turns = [
        make_turn(0, "나는 땅콩 알레르기가 있어서 어릴 때 응급실에 간 적도 있어.", user="지훈"),
        make_turn(1, "지난주에 부산 해운대에 있는 부모님 댁에 다녀왔어.", user="지훈"),
        make_turn(2, "고수를 정말 싫어해. 비누 맛이 나.", user="수빈"),
    ]

    fields = BuiltinExtractor().extract(turns, KO).fields

    assert "지훈: 나는 땅콩 알레르기가 있어서 어릴 때 응급실에 간 적도 있어." in fields.key_facts
    assert len(fields.key_facts) >= 3
    assert {"땅콩", "알레르기", "응급실", "부산", "해운대", "고수"} <= set(fields.keywords)
    assert not {"알레르기가", "응급실에", "고수를"} & set(fields.keywords)


def test_a_known_name_loses_its_familiar_i_as_a_keyword() -> None:
    pytest.importorskip("lindera", reason="the dictionary's person names come with the local extra")

    assert [term.key for term in terms("지훈이는 야근이 많아")][:1] == ["지훈"]
