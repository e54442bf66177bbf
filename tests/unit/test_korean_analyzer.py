"""Korean morphology in the shared analyzer (lindera ko-dic, the `local` extra), and the light
analyzer it falls back to where the package is not installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_engine.retrieval import korean
from memory_engine.retrieval.text import tokenize

pytest.importorskip("lindera", reason="the Korean analyzer comes with the local extra")


@pytest.fixture(autouse=True)
def lindera() -> Iterator[None]:
    korean.use("lindera")
    yield
    korean.use(None)


def test_lindera_is_chosen_when_it_is_installed() -> None:
    korean.use(None)

    assert korean.analyzer() == "lindera"


def test_particles_and_endings_are_not_terms() -> None:
    # Given a sentence whose words carry particles and a verb ending
    terms = tokenize("친구를 학교에서 만났어요")

    # Then the nouns and the verb's lemma are terms, the particles and endings alone are not
    assert {"친구", "학교", "만나"} <= set(terms)
    assert not {"를", "에서", "어요", "았"} & set(terms)


def test_a_question_with_other_particles_and_endings_meets_the_statement() -> None:
    statement = set(tokenize("나는 땅콩 알레르기가 있어서 응급실에 간 적도 있어"))
    question = set(tokenize("땅콩이랑 알레르기는 언제부터야?"))

    assert {"땅콩", "알레르기"} <= statement & question


def test_inflected_verbs_share_their_lemma() -> None:
    assert "만나" in tokenize("만났다") and "만나" in tokenize("만나요") and "만나" in tokenize("만날래?")


def test_a_compound_noun_is_also_indexed_as_its_parts() -> None:
    terms = tokenize("요즘 재택근무를 해요")

    assert {"재택근무", "재택", "근무"} <= set(terms)


@pytest.mark.parametrize(
    "form", ["지훈이", "지훈이가", "지훈이는", "지훈 씨", "지훈씨가", "지훈님은", "지훈아"]
)
def test_a_name_with_a_familiar_or_polite_suffix_meets_the_bare_name(form: str) -> None:
    assert "지훈" in tokenize(form)


def test_a_name_the_dictionary_does_not_know_still_meets_its_other_forms() -> None:
    # Given a name ko-dic misreads ("서연이는" as 서 + 연이), said with two different particles
    said, asked = set(tokenize("서연이는 부산에 살아")), set(tokenize("서연이가 사는 곳은?"))

    # Then the particle-stripped forms still meet
    assert "서연" in said & asked


def test_english_words_and_numbers_beside_korean_are_kept() -> None:
    terms = tokenize("2023년 5월에 Netflix에서 봤어")

    assert {"2023", "5", "netflix"} <= set(terms)


def test_the_light_analyzer_serves_without_lindera() -> None:
    # Given the light analyzer (what a Lambda without the local extra runs)
    korean.use("light")

    # Then Korean words give their particle-stripped forms and character bigrams
    assert korean.analyzer() == "light"
    assert korean.morphemes("재택근무를") is None
    assert {"재택근무를", "재택근무", "재택", "택근", "근무"} <= set(tokenize("재택근무를"))


def test_an_unknown_analyzer_name_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="'lindera' or 'light'"):
        korean.use("kiwi")


def test_the_environment_can_force_the_light_analyzer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_ENGINE_KOREAN_ANALYZER", "light")
    korean.use(None)

    assert korean.analyzer() == "light"
