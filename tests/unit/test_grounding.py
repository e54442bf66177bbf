"""Issue #45 §2: whatever model extracted a memory, what is stored is checked against the turns."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_engine.extraction.grounding import ground
from memory_engine.models.domain import MemoryFields, Turn
from memory_engine.ports import ExtractionContext

AT = datetime(2026, 5, 1, tzinfo=UTC)
TURNS = [
    Turn(
        tenant="t",
        session_uuid="s",
        dialog_uuid="d1",
        seq=0,
        user_name="Maya",
        npc_id="Luna",
        query="My dog Biscuit stole my socks again.",
        answer="Ha, Biscuit has good taste!",
        timestamp=AT,
        created_at=AT,
    ),
]
CONTEXT = ExtractionContext(user_name="Maya", language="en")


def fields(**values: object) -> MemoryFields:
    base: dict[str, object] = {
        "summary": "Maya told Luna that Biscuit stole her socks.",
        "characters": ["Maya", "Luna"],
    }
    return MemoryFields.model_validate({**base, **values})


def test_a_quote_is_credited_to_the_speaker_whose_words_hold_it() -> None:
    # Given a model that gave Luna's line to the dog and Maya's to Luna
    given = fields(
        key_dialogue=['Biscuit: "Ha, Biscuit has good taste!"', "Luna: My dog Biscuit stole my socks again."]
    )

    grounded, changes = ground(given, TURNS, CONTEXT, {})

    assert grounded.key_dialogue == [
        'Luna: "Ha, Biscuit has good taste!"',
        "Maya: My dog Biscuit stole my socks again.",
    ]
    assert changes["recredited_quotes"] == 2


def test_a_quote_no_turn_holds_is_dropped() -> None:
    grounded, changes = ground(
        fields(key_dialogue=["Maya: I love rainy Tuesdays in Paris."]), TURNS, CONTEXT, {}
    )

    assert grounded.key_dialogue == [] and changes["dropped_quotes"] == 1


def test_a_fact_the_turns_say_nothing_of_is_dropped_a_paraphrase_kept() -> None:
    given = fields(key_facts=["Biscuit took Maya's socks.", "Maya works as a pilot in Oslo."])

    grounded, changes = ground(given, TURNS, CONTEXT, {})

    assert grounded.key_facts == ["Biscuit took Maya's socks."] and changes["dropped_facts"] == 1


def test_when_the_model_names_nobody_the_speakers_and_the_pets_the_turns_name_are_characters() -> None:
    grounded, _ = ground(fields(characters=["Maya"]), TURNS, CONTEXT, {}, named_none=True)

    assert grounded.characters == ["Maya", "Luna", "Biscuit"]


def test_an_intent_that_restates_the_summary_is_left_empty_another_kept() -> None:
    restated = fields(intent="Maya told Luna that Biscuit stole her socks.")
    wish = fields(intent="Maya wants Biscuit to stop stealing socks.")

    assert ground(restated, TURNS, CONTEXT, {})[0].intent == ""
    assert ground(wish, TURNS, CONTEXT, {})[0].intent == wish.intent
