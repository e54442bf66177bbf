"""The built-in extractive extractor: every field of a memory from the batch's own words."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from memory_engine.errors import InvalidInput
from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.extraction.sentences import split_sentences
from memory_engine.models.domain import Turn
from memory_engine.ports import ExtractionContext

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
QUOTE = re.compile(r'^(?P<name>[^:]+): "(?P<quote>.+)"$')


def make_turn(seq: int, query: str, answer: str = "", user: str = "Caroline", npc: str | None = None) -> Turn:
    return Turn(
        tenant="t",
        session_uuid="s",
        dialog_uuid=f"d{seq}",
        seq=seq,
        query=query,
        answer=answer,
        user_name=user,
        npc_id=npc,
        timestamp=T0 + timedelta(minutes=seq),
        created_at=T0,
    )


def english_batch() -> list[Turn]:
    lines = [
        ("I went to the LGBTQ support group yesterday and it was powerful.", "What happened there?"),
        ("The stories were inspiring. I'm 28 and I finally feel accepted.", "I took my kids to the beach."),
        ("Captain Mira Holt from the shelter said adoption is possible.", "Holt helped families in Boston."),
        ("I want to adopt a child next year.", "Let's meet at the cafe on Friday to talk about it."),
        ("It was raining all morning here.", "Same here, cold and rainy."),
        ("My mom gave me a necklace from Sweden when I was 10.", "That is a lovely gift."),
        ("Are you still painting?", "Yes! I painted a sunset by the lake in July."),
        ("See you soon.", "Bye!"),
    ]
    return [make_turn(i, q, a, npc="Melanie") for i, (q, a) in enumerate(lines)]


def korean_batch() -> list[Turn]:
    lines = [
        ("어제 학교에서 친구들이랑 축구를 했어.", "재밌었겠다! 누가 이겼어?"),
        ("우리 반이 3대 2로 이겼어. 나는 골을 두 개 넣었어.", "나는 주말에 부산에 갈 거야."),
        ("부산에서 뭐 할 건데?", "할머니 댁에 가서 바다를 보고 싶어."),
        ("오늘은 비가 와서 집에 있었어.", "나도 고양이랑 집에서 쉬었어."),
        ("다음 주에 같이 도서관에 가자.", "좋아, 월요일 오후 3시에 만나자."),
        ("김철수 씨가 새로 전학 왔대.", "철수는 서울에서 왔다고 들었어."),
        ("나는 요리사가 되고 싶어.", "너는 요리를 정말 잘하잖아."),
        ("ㅋㅋ 그래", "응응"),
    ]
    return [make_turn(i, q, a, user="지은", npc="민수") for i, (q, a) in enumerate(lines)]


def test_an_english_batch_fills_every_field() -> None:
    # Given an English batch of eight turns
    turns = english_batch()

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields

    # Then every field has content
    for name, value in fields.model_dump().items():
        assert value, f"{name} is empty"
    assert {"Caroline", "Melanie", "Mira Holt"} <= set(fields.characters)


def test_a_korean_batch_fills_every_field() -> None:
    # Given a Korean batch of eight turns
    turns = korean_batch()

    # When it is extracted with the default language
    fields = BuiltinExtractor().extract(turns, ExtractionContext()).fields

    # Then every field has content, in the words of the batch
    for name, value in fields.model_dump().items():
        assert value, f"{name} is empty"
    assert fields.characters[:2] == ["지은", "민수"]
    assert "부산" in fields.keywords


def test_a_mixed_korean_and_english_batch_fills_every_field() -> None:
    # Given Korean turns mixed with English words and sentences
    turns = [
        make_turn(
            0, "오늘 Starbucks에서 Mira 만났어.", "와 진짜? 나도 도쿄 가보고 싶어.", user="지은", npc="하늘"
        ),
        make_turn(
            1,
            "I told her we should visit. 우리 7월에 같이 가자!",
            "좋아, 비행기표 알아볼게.",
            user="지은",
            npc="하늘",
        ),
    ]

    # When it is extracted in Korean
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="ko")).fields

    # Then every field has content, Latin names are kept and the intent uses the Korean template
    for name, value in fields.model_dump().items():
        assert value, f"{name} is empty"
    assert "Mira" in fields.characters
    assert "Starbucks" in fields.location
    assert "의 바람이나 계획" in fields.intent


def test_titles_of_works_and_brands_are_not_characters() -> None:
    # Given a batch naming a film, a cinema chain and a friend
    turns = [make_turn(0, "I watched Avengers at the AMC theater with Ana. The new Marvel movie was long.")]

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields

    # Then only the people are characters
    assert fields.characters == ["Caroline", "Ana"]


def test_the_metadata_names_the_builtin_extractor_and_its_version() -> None:
    # Given any batch
    turns = english_batch()

    # When it is extracted
    extraction = BuiltinExtractor().extract(turns, ExtractionContext(language="en"))

    # Then the metadata says which extractor made it
    assert extraction.metadata == {"extractor": "builtin", "version": "builtin-1"}


def test_the_same_batch_always_gives_the_same_memory() -> None:
    # Given one batch extracted twice
    turns = korean_batch()

    # When both extractions are compared
    first = BuiltinExtractor().extract(turns, ExtractionContext())
    second = BuiltinExtractor().extract(list(turns), ExtractionContext())

    # Then they are identical
    assert first == second


def test_an_empty_batch_is_rejected_with_a_clear_error() -> None:
    # Given no turns at all
    # When extraction is asked for
    # Then it refuses, saying why
    with pytest.raises(InvalidInput, match="at least one turn"):
        BuiltinExtractor().extract([], ExtractionContext())


def test_keywords_stay_within_65_and_distinct_even_for_a_huge_batch() -> None:
    # Given a batch with hundreds of different content words
    words = [f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(400)]
    turns = [make_turn(i, " ".join(words[i * 50 : (i + 1) * 50]) + ".") for i in range(8)]

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en", length_limit=10_000)).fields

    # Then at most 65 distinct keywords come out
    assert 0 < len(fields.keywords) <= 65
    assert len({k.casefold() for k in fields.keywords}) == len(fields.keywords)


def test_keywords_leave_out_stop_words() -> None:
    # Given an English batch
    turns = english_batch()

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields

    # Then function words are not keywords, content words are
    assert not {"the", "and", "i", "was", "it"} & {k.casefold() for k in fields.keywords}
    assert "adoption" in fields.keywords


def test_korean_particles_are_stripped_from_keywords() -> None:
    # Given Korean words carrying particles (에서, 을, 이랑, 은, 는, 에게)
    turns = [
        make_turn(0, "공원에서 강아지를 봤어. 강아지는 정말 귀여웠어.", user="지은"),
        make_turn(1, "친구에게 강아지 사진을 보냈어. 공원은 넓었어.", user="지은"),
        make_turn(2, "고양이랑 공원까지 산책했어.", user="지은"),
    ]

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext()).fields

    # Then the keywords are the bare nouns
    assert {"공원", "강아지", "친구", "사진", "고양이"} <= set(fields.keywords)
    assert not {"공원에서", "강아지를", "강아지는", "공원은", "친구에게", "고양이랑"} & set(fields.keywords)


def test_key_facts_stay_within_18_in_chronological_order() -> None:
    # Given forty turns, each stating a fact with a number
    turns = [make_turn(i, f"I bought {i + 2} apples at the market on day {i + 1}.") for i in range(40)]

    # When they are extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields

    # Then at most 18 facts come out, in the order they were said, each naming its speaker
    assert 0 < len(fields.key_facts) <= 18
    days = [int(re.search(r"day (\d+)", fact).group(1)) for fact in fields.key_facts]  # type: ignore[union-attr]
    assert days == sorted(days)
    assert all(fact.startswith("Caroline: ") for fact in fields.key_facts)


def test_key_facts_carry_numbers_names_and_first_person_statements() -> None:
    # Given an English batch with facts among small talk
    turns = english_batch()

    # When it is extracted
    facts = " ".join(BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields.key_facts)

    # Then the facts are there and the greetings are not
    assert "I'm 28" in facts
    assert "necklace from Sweden" in facts
    assert "See you soon" not in facts


def test_key_dialogue_holds_at_most_four_quotes_per_character() -> None:
    # Given a long batch where two characters say many different things
    turns = [
        make_turn(
            i, f"The dragon number {i} burned village {i}.", f"Knight {i} guarded tower {i}.", npc="Arthur"
        )
        for i in range(12)
    ]

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields

    # Then each character has at most four quotes, formatted Name: "quote"
    speakers = [QUOTE.match(line).group("name") for line in fields.key_dialogue]  # type: ignore[union-attr]
    assert speakers.count("Caroline") == 4
    assert speakers.count("Arthur") == 4


def test_summary_holds_at_most_about_ten_sentences_prefixed_with_the_speaker() -> None:
    # Given forty turns of distinct sentences
    turns = [make_turn(i, f"Topic {i} was about planet {i} and star {i}.", npc="Mira") for i in range(40)]

    # When they are extracted
    summary = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields.summary

    # Then the summary keeps about ten of them, each after its speaker
    assert 1 <= len(split_sentences(summary)) <= 10
    assert summary.startswith("Caroline: ")


def test_summary_keeps_the_chronological_order_of_its_sentences() -> None:
    # Given an English batch
    turns = english_batch()

    # When it is extracted
    summary = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields.summary

    # Then picked sentences appear in the order they were said
    assert summary.index("support group") < summary.index("Mira Holt") < summary.index("necklace")


def test_a_batch_of_short_turns_still_gets_a_summary_but_no_invented_intent() -> None:
    # Given turns of one or two words
    turns = [make_turn(i, "ok", "hmm", npc="Mira") for i in range(8)]

    # When they are extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields

    # Then the summary is still written, and nobody is said to want anything
    assert fields.summary
    assert fields.intent == ""


@pytest.mark.parametrize(("batch", "language"), [(english_batch, "en"), (korean_batch, "ko")])
def test_intent_holds_two_to_four_sentences(batch: object, language: str) -> None:
    # Given a batch with plans and questions
    turns = batch()  # type: ignore[operator]

    # When it is extracted
    intent = BuiltinExtractor().extract(turns, ExtractionContext(language=language)).fields.intent

    # Then intent has two to four sentences
    assert 2 <= len(split_sentences(intent)) <= 4


def test_intent_quotes_what_a_character_wants() -> None:
    # Given a batch where Caroline says what she wants
    turns = english_batch()

    # When it is extracted
    intent = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields.intent

    # Then intent names her and quotes the wish
    assert 'Caroline expresses a wish or plan: "I want to adopt a child next year."' in intent


def test_intent_without_any_wish_stays_empty_rather_than_describing_the_topic() -> None:
    # Given a batch of plain statements, no plans, no questions
    turns = [make_turn(i, f"The lighthouse keeper repaired the lamp {i}.") for i in range(3)]

    # When it is extracted
    intent = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields.intent

    # Then intent is empty: no template text stands in for a wish nobody stated
    assert intent == ""


def test_location_carries_place_time_weather_and_the_turns_date() -> None:
    # Given an English batch with places, times and weather
    turns = english_batch()

    # When it is extracted
    location = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields.location

    # Then each kind of cue is found, with the date of the turns
    assert "beach" in location
    assert "yesterday" in location
    assert "rainy" in location
    assert "2023-05-08" in location


def test_location_is_never_empty_thanks_to_the_timestamps() -> None:
    # Given turns with no place, time or weather words, spread over two days
    turns = [make_turn(0, "hmm"), make_turn(1, "ok").model_copy(update={"timestamp": T0 + timedelta(days=1)})]

    # When they are extracted
    location = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields.location

    # Then the location still gives the date range
    assert "2023-05-08 ~ 2023-05-09" in location


def test_length_limit_hides_a_fact_said_after_the_limit() -> None:
    # Given a turn whose second sentence starts after the first 40 characters
    query = "I like quiet mornings with green tea. My passport number is 12345 and I live in Oslo."
    turns = [make_turn(0, query, "Noted, thanks for telling me.")]

    # When it is extracted with a length limit of 40
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en", length_limit=40)).fields

    # Then nothing after the limit appears anywhere, not even the answer
    dumped = str(fields.model_dump())
    assert "12345" not in dumped
    assert "Oslo" not in dumped
    assert "Noted" not in dumped
    assert "green tea" in fields.summary


def test_turns_with_empty_answers_are_extracted_as_a_transcript() -> None:
    # Given a transcript imported line by line: each turn is one speaker's line, no answer
    lines = [
        ("Mira", "I found the map in the old library."),
        ("Jonas", "Then we sail to Port Royal at dawn."),
    ]
    turns = [make_turn(i, text, user=speaker) for i, (speaker, text) in enumerate(lines)]

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, ExtractionContext(language="en")).fields

    # Then the speakers are the characters, no assistant appears, and quotes are attributed
    assert fields.characters == ["Mira", "Jonas"]
    assert 'Mira: "I found the map in the old library."' in fields.key_dialogue
    assert "assistant" not in fields.summary


def test_characters_merge_aliases_into_the_known_canonical_name() -> None:
    # Given a thread that already knows "Mira Holt" and a batch calling her "Captain Holt"
    turns = [make_turn(0, "Captain Holt asked me to guard the gate.", "Holt is strict.", npc="Jonas")]
    context = ExtractionContext(language="en", known_characters={"Mira Holt": ["Mira"]})

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, context).fields

    # Then she appears once, under the known name
    assert fields.characters == ["Caroline", "Jonas", "Mira Holt"]


def test_speakers_are_named_by_their_canonical_name() -> None:
    # Given a speaker using a short name the thread knows as an alias
    turns = [make_turn(0, "I will guard the northern gate tonight.", user="Mira")]
    context = ExtractionContext(language="en", known_characters={"Mira Holt": ["Mira", "Captain Holt"]})

    # When it is extracted
    fields = BuiltinExtractor().extract(turns, context).fields

    # Then her lines carry the canonical name
    assert fields.characters == ["Mira Holt"]
    assert fields.summary.startswith("Mira Holt: ")
