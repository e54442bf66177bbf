"""Issue #45: what an LLM answered is grounded with the one-value facts the turns state, so a later
statement can replace them. The answers below are the local model's (Qwen2.5-Coder-1.5B, prompt
en-v5, bench/.cache/fact_updates_llm) for the fact-update set's batches: it wrote no key fact for
"I live in Busan" nor for "Sofia and I broke up". English and Korean."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_engine.extraction.grounding import ground
from memory_engine.extraction.turn_statements import said_statements, with_said_statements
from memory_engine.models.domain import MAX_KEY_FACTS, MemoryFields, Turn
from memory_engine.ports import ExtractionContext

AT = datetime(2024, 3, 3, 10, 0, tzinfo=UTC)


def said(*lines: tuple[str, str]) -> list[Turn]:
    """One turn per line, as the fact-update set sends them: the speaker is the turn's user."""
    return [
        Turn(
            tenant="t",
            session_uuid="s1",
            dialog_uuid=f"d{seq}",
            seq=seq,
            query=text,
            answer="",
            user_name=speaker,
            timestamp=AT,
            created_at=AT,
        )
        for seq, (speaker, text) in enumerate(lines)
    ]


FIRST_SESSION_EN = said(
    ("Jae", "Hey Mina, how have you been? It's been ages."),
    ("Mina", "Good! I live in Busan with my parents, close to Haeundae beach."),
    ("Jae", "Lucky you. I work as a barista at a small cafe downtown."),
    ("Mina", "I have a dog named Max, a very lazy beagle."),
)
FIRST_SESSION_KO = said(
    ("재현", "미나야, 잘 지냈어? 진짜 오랜만이다."),
    ("미나", "응! 나는 부모님이랑 해운대 근처 부산에 살아."),
    ("재현", "좋겠다. 나는 시내 작은 카페에서 바리스타로 일해."),
    ("미나", "나는 맥스라는 강아지를 키워, 엄청 게으른 비글이야."),
)
# The model's answer to the English first session: a summary, quotes, no key fact.
NO_FACTS_EN = MemoryFields(
    summary="Jae and Mina meet at a cafe downtown in Busan. They discuss their lives.",
    keywords=["Jae", "Mina", "barista", "cafe", "Busan", "dog"],
    key_facts=[],
    key_dialogue=["Mina: Good! I live in Busan with my parents, close to Haeundae beach."],
    intent="",
    location="Busan downtown, Korea",
    characters=["Jae", "Mina", "Max"],
)


def test_a_speakers_one_value_statements_are_added_when_the_model_wrote_no_fact() -> None:
    # Given the model's answer with no key fact for a batch where Mina and Jae say where they live
    # and work, and Mina that she has a dog
    context = ExtractionContext(user_name="Jae", language="en")

    # When it is grounded
    fields, changes = ground(NO_FACTS_EN, FIRST_SESSION_EN, context, {})

    # Then each of those statements is a key fact, as its speaker's line
    assert fields.key_facts == [
        "Mina: I live in Busan with my parents, close to Haeundae beach.",
        "Jae: I work as a barista at a small cafe downtown.",
        "Mina: I have a dog named Max, a very lazy beagle.",
    ]
    assert changes["added_statements"] == 3


def test_korean_statements_are_added_in_the_speakers_words() -> None:
    context = ExtractionContext(user_name="재현", language="ko")
    fields, _ = ground(
        NO_FACTS_EN.model_copy(update={"characters": ["재현", "미나"]}), FIRST_SESSION_KO, context, {}
    )
    assert fields.key_facts == [
        "미나: 나는 부모님이랑 해운대 근처 부산에 살아.",
        "재현: 나는 시내 작은 카페에서 바리스타로 일해.",
        "미나: 나는 맥스라는 강아지를 키워, 엄청 게으른 비글이야.",
    ]


def test_a_statement_the_models_fact_already_states_is_not_added_twice() -> None:
    # Given the model's third-person facts for where Mina lives (English) and 미나 (Korean)
    english = ["Mina lives in Busan with her parents.", "Jae works as a barista."]
    korean = ["미나는 부모님과 부산에 산다."]

    # Then only what they do not state is added
    added_en = with_said_statements(english, ["Mina", "Jae"], said_statements(FIRST_SESSION_EN, "Jae", {}))
    assert added_en == [*english, "Mina: I have a dog named Max, a very lazy beagle."]
    added_ko = with_said_statements(korean, ["미나", "재현"], said_statements(FIRST_SESSION_KO, "재현", {}))
    assert added_ko == [
        *korean,
        "재현: 나는 시내 작은 카페에서 바리스타로 일해.",
        "미나: 나는 맥스라는 강아지를 키워, 엄청 게으른 비글이야.",
    ]


def test_within_a_batch_a_speakers_later_statement_of_a_slot_is_the_one_kept() -> None:
    turns = said(("Leo", "I'm dating Sofia."), ("Hana", "Nice!"), ("Leo", "Sofia and I broke up last month."))
    assert said_statements(turns, "Leo", {}) == {
        ("relationship", "Leo"): "Leo: Sofia and I broke up last month."
    }


def test_the_assistants_remarks_state_no_ones_fact() -> None:
    turn = said(("Mina", "Any tips for the move?"))[0].model_copy(update={"answer": "I live in the cloud."})
    assert said_statements([turn], "Mina", {}) == {}


def test_added_statements_take_the_place_of_facts_that_state_nothing_past_the_bound() -> None:
    # Given the model's full list of facts, none stating a one-value fact, and one statement
    facts = [f"Mina saw film number {n}." for n in range(MAX_KEY_FACTS)]
    statement = {("residence", "Mina"): "Mina: I live in Busan."}

    # Then the bound holds and the statement is kept, in place of the last plain fact
    out = with_said_statements(facts, ["Mina"], statement)
    assert len(out) == MAX_KEY_FACTS and out[-1] == "Mina: I live in Busan." and out[:-1] == facts[:-1]
