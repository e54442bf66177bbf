"""Speaker match: a question that names whoever said a turn favours that turn (retrieval.speakers)."""

from __future__ import annotations

from memory_engine.retrieval.speakers import SpeakerMatch, speakers
from memory_engine.retrieval.text import tokenize


def test_a_turns_speakers_are_the_labels_that_start_its_lines() -> None:
    text = "Alex: We met at 9: late again\nMira: Sorry!\n8 May 2023"

    assert speakers(text) == ["Alex", "Mira"]


def test_a_question_naming_the_speaker_matches_even_in_the_possessive() -> None:
    named = SpeakerMatch(tokenize("What did Caroline's sister paint?"))

    assert named("Caroline: I painted a lake") == 1.0
    assert named("Melanie: Did you paint?\nCaroline: Yes, a lake") == 1.0
    assert named("Melanie: Caroline painted a lake") == 0.0


def test_a_korean_name_matches_with_its_particle_or_title() -> None:
    assert SpeakerMatch(tokenize("지훈이 어제 뭐 먹었어?"))("지훈: 김치찌개 먹었어") == 1.0
    assert SpeakerMatch(tokenize("지훈 씨는 어디 살아?"))("지훈: 부산에 살아") == 1.0
    assert SpeakerMatch(tokenize("지훈이 어제 뭐 먹었어?"))("민지: 나는 라면") == 0.0


def test_every_word_of_a_speakers_name_must_be_in_the_question() -> None:
    named = SpeakerMatch(tokenize("What does Kim like?"))

    assert named("Dr Kim: I like tea") == 0.0
    assert named("Kim: I like tea") == 1.0


def test_names_made_of_stop_words_and_empty_questions_match_nothing() -> None:
    assert SpeakerMatch(tokenize("what did I say about you?"))("I: hello\nyou: hi") == 0.0
    assert SpeakerMatch(tokenize(""))("Alex: hello") == 0.0
