"""The analyzer every lexical path shares: English words, stop words, stems, Korean particles.

Korean here is the light analyzer (particles and bigrams, what runs without the `local` extra);
the morphological one is tests/unit/test_korean_analyzer.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.retrieval import korean
from memory_engine.retrieval.text import STOP_WORDS, mostly_korean, stem, tokenize


@pytest.fixture(autouse=True)
def light_korean() -> Iterator[None]:
    korean.use("light")
    yield
    korean.use(None)


def test_words_are_lower_cased_and_split_on_punctuation() -> None:
    # Given mixed case and punctuation
    text = "Hiking, CAMPING; kayaks!"

    # When it is tokenized
    terms = tokenize(text)

    # Then each word is one lower-case term
    assert terms == ["hike", "camp", "kayak"]


def test_english_stop_words_are_dropped() -> None:
    # Given a question made mostly of function words
    terms = tokenize("When did she go to the park with them?")

    # Then only the words that carry the topic remain
    assert terms == ["go", "park"]
    assert {"the", "when", "she"} <= STOP_WORDS


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("cats", "cat"),
        ("ponies", "poni"),
        ("caresses", "caress"),
        ("running", "run"),
        ("painted", "paint"),
        ("hopping", "hop"),
        ("filing", "file"),
        ("relational", "relat"),
        ("generalizations", "gener"),
    ],
)
def test_the_stemmer_follows_porter(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_inflected_forms_of_a_word_share_one_term() -> None:
    # Given a document and a query that inflect the same verb differently
    # When both are tokenized
    # Then they meet on the same stem
    assert tokenize("She paints every weekend")[0] == tokenize("painting")[0] == "paint"


def test_possessives_and_contractions_keep_the_word() -> None:
    # Given an English possessive and a contraction
    terms = tokenize("Caroline's dog doesn't bark")

    # Then the name is kept without "'s" and the contraction is treated as a stop word
    assert terms == ["carolin", "dog", "bark"]


def test_digits_are_kept_as_terms() -> None:
    assert tokenize("Born in 1987, 2 kids, 3rd time") == ["born", "1987", "2", "kid", "3rd", "time"]


def test_a_korean_word_also_yields_its_stem_without_the_trailing_particle() -> None:
    # Given a name followed by the subject particle
    terms = tokenize("미라가 왔어")

    # Then both the surface word and the bare name are terms
    assert "미라가" in terms
    assert "미라" in terms


def test_a_korean_query_without_the_particle_matches_the_particled_document() -> None:
    # Given a document with particles and a query with different ones
    document = set(tokenize("미라는 학교에서 고양이를 봤다"))
    query = tokenize("미라가 고양이")

    # Then the bare forms meet
    assert {"미라", "고양이"} <= document & set(query)


def test_korean_runs_yield_their_character_bigrams() -> None:
    # Given a compound noun
    terms = tokenize("도서관사서")

    # Then its bigrams are terms, so a query for a part of it still matches
    assert {"도서", "서관", "관사", "사서"} <= set(terms)


def test_a_two_syllable_korean_word_is_not_counted_twice_as_its_own_bigram() -> None:
    assert tokenize("학교") == ["학교"]


def test_a_bare_particle_glued_to_a_latin_word_is_not_a_term() -> None:
    assert tokenize("AI가 좋아") == ["ai", "좋아"]


def test_full_width_characters_are_normalised() -> None:
    assert tokenize("ＡＢＣ １２３") == ["abc", "123"]


def test_empty_and_punctuation_only_text_gives_no_terms() -> None:
    assert tokenize("") == []
    assert tokenize(" ... ?! ") == []


@pytest.mark.parametrize(
    ("text", "korean"),
    [
        ("수빈이가 질색하는 채소는 뭐야?", True),
        ("지훈이 Netflix 봤어?", True),  # two Korean words of three
        ("2023년 5월에 뭐 했어?", True),  # numbers do not count
        ("Did Jihoon watch 기생충?", False),
        ("What did 수빈 do in May 2023?", False),
        ("AI가 뭐야", True),  # "AI가" is a Latin word, "뭐야" a Korean one: half
        ("", False),
        ("2023 ?!", False),
    ],
)
def test_a_text_is_korean_when_at_least_half_of_its_words_are(text: str, korean: bool) -> None:
    assert mostly_korean(text) is korean
