"""Issue #45 §2: whatever model extracted a memory, what is stored is checked against the turns."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_engine.extraction.grounding import ground
from memory_engine.models.domain import MemoryFields, Turn
from memory_engine.ports import CurrentFact, ExtractionContext

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


# Issue #45: the Korean answers of Qwen2.5-Coder-1.5B copied the current facts the prompt showed,
# label and all (bench/.cache/fact_updates_llm/ko; docs/research/extraction.md), and an English
# twin of the same shapes.
SHOWN_AT = datetime(2024, 3, 3, tzinfo=UTC)
MOVED_AT = datetime(2024, 4, 14, tzinfo=UTC)
COPIES = {
    "ko": {
        "user": "미나",
        "friend": "재현",
        "lines": [
            ("이번엔 내 소식: 새 직장 때문에 지난주에 서울로 이사했어.", "진짜? 어느 동네야?"),
            ("망원동, 한강 근처. 집은 좁은데 밝아.", "벌써 바다 그립지 않아?"),
        ],
        "shown": "재현: 나는 부모님과 해운대 근처 부산에 살아.",
        "answered": [
            "F1 (2024-03-03): '{shown}'",
            "F4 (2024-03-03): '재현: 나는 집은 좁은데 밝아.'",
            "F6 (2024-04-14): 'F1 (2024-03-03): "
            "'재현은 미나에게 부모님과 해운대 근처 부산에 살아 있는 카페에서 바리스타로 일해.'",
            "미나: 이번엔 내 소식: 새 직장 때문에 지난주에 서울로 이사했어.",
        ],
        "kept": [
            "미나: 나는 집은 좁은데 밝아.",
            "재현은 미나에게 부모님과 해운대 근처 부산에 살아 있는 카페에서 바리스타로 일해.",
            "미나: 이번엔 내 소식: 새 직장 때문에 지난주에 서울로 이사했어.",
        ],
    },
    "en": {
        "user": "Mina",
        "friend": "Jae",
        "lines": [
            ("Big news: I moved to Seoul last week for a new job.", "No way! Which neighbourhood?"),
            ("Mangwon, near the river. The apartment is tiny but bright.", "Don't you miss the sea?"),
        ],
        "shown": "Jae: I live in Busan with my parents, near Haeundae.",
        "answered": [
            'F1 (2024-03-03): "{shown}"',
            'F4 (2024-03-03): "Jae: The apartment is tiny but bright."',
            "F6 (2024-04-14): 'F1 (2024-03-03): 'Jae lives near Haeundae in Busan with his parents.'",
            "Mina: Big news: I moved to Seoul last week for a new job.",
        ],
        "kept": [
            "Mina: The apartment is tiny but bright.",
            "Jae lives near Haeundae in Busan with his parents.",
            "Mina: Big news: I moved to Seoul last week for a new job.",
        ],
    },
}


@pytest.mark.parametrize("language", sorted(COPIES))
def test_a_key_fact_copying_a_shown_current_fact_is_dropped_and_a_labelled_one_keeps_only_its_own_words(
    language: str,
) -> None:
    # Given a batch where Mina moved, a prompt that showed Jae's home as F1, and an answer whose
    # key facts copy it label and all, relabel one of Mina's lines, and nest one label in another
    case = COPIES[language]
    user, friend, shown = str(case["user"]), str(case["friend"]), str(case["shown"])
    turns = [
        Turn(
            tenant="t",
            session_uuid="s2",
            dialog_uuid=f"d{seq}",
            seq=seq,
            user_name=user,
            timestamp=MOVED_AT,
            created_at=MOVED_AT,
            query=query,
            answer=answer,
        )
        for seq, (query, answer) in enumerate(case["lines"])  # type: ignore[arg-type]
    ]
    context = ExtractionContext(
        user_name=user,
        language=language,
        current_facts=[CurrentFact(id="m1#0", fact=shown, stated_at=SHOWN_AT)],
    )
    answered = [fact.format(shown=shown) for fact in case["answered"]]  # type: ignore[attr-defined]
    given = MemoryFields(summary="-", characters=[user, friend], key_facts=answered)

    # When the answer is grounded
    grounded, changes = ground(given, turns, context, {user: [], friend: []})

    # Then the copy of F1 is gone, the relabelled line is Mina's, the nested labels are stripped,
    # and no key fact is left that reads as a fact of a character named "F1 (2024-03-03)"
    assert grounded.key_facts == case["kept"]
    assert changes["dropped_copies"] == 1 and changes["stripped_copies"] == 2
    assert not any(fact.startswith("F") and "(2024-" in fact for fact in grounded.key_facts)


def test_a_key_fact_without_a_shown_facts_label_is_grounded_as_before() -> None:
    # Given a fact naming a Formula 1 car, which opens with an F and a number but no label
    given = fields(key_facts=["F1 cars and Biscuit: Maya's socks again."])

    grounded, changes = ground(given, TURNS, CONTEXT, {})

    assert grounded.key_facts == given.key_facts and "stripped_copies" not in changes
