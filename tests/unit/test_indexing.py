"""What a memory looks like to the index: its own document and one document per source turn."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_engine.indexing.documents import index_documents, spoken_date
from memory_engine.models.domain import Memory, MemoryFields, Turn
from memory_engine.retrieval.config import RetrievalConfig

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _turn(uuid: str, seq: int, text: str) -> Turn:
    return Turn(
        tenant="t",
        session_uuid="s1",
        dialog_uuid=uuid,
        seq=seq,
        query=text,
        user_name="Ana",
        timestamp=WHEN,
        created_at=WHEN,
    )


def _memory(turn_embeddings: list[list[float]]) -> Memory:
    return Memory(
        tenant="t",
        memory_id="20260318_040037_abcdef",
        session_uuid="s1",
        parent_session_uuid="thread",
        fields=MemoryFields(summary="Ana talks about her tortoise."),
        source_dialog_uuids=["d1", "d2"],
        first_seq=0,
        last_seq=1,
        embedding=[1.0, 0.0],
        turn_embeddings=turn_embeddings,
        source_text="Ana: My tortoise Sheldon\nAna: He likes strawberries",
        created_at=WHEN,
    )


TURNS = [_turn("d1", 0, "My tortoise Sheldon"), _turn("d2", 1, "He likes strawberries")]


def test_a_memory_gives_its_document_then_one_per_turn_pointing_back_to_it() -> None:
    docs = index_documents(_memory([[0.0, 1.0], [0.6, 0.8]]), TURNS)

    assert [(doc.doc_id, doc.kind, doc.memory_id) for doc in docs] == [
        ("20260318_040037_abcdef", "memory", None),
        ("20260318_040037_abcdef:0", "turn", "20260318_040037_abcdef"),
        ("20260318_040037_abcdef:1", "turn", "20260318_040037_abcdef"),
    ]
    assert docs[2].source_dialog_uuids == ["d2"]
    assert docs[2].vector == [0.6, 0.8]


def test_a_turn_document_holds_the_line_of_dialogue_and_its_date() -> None:
    docs = index_documents(_memory([]), TURNS)

    assert docs[1].text == "Ana: My tortoise Sheldon\n8 May 2023"
    assert "8 May 2023" in docs[0].text


def test_a_memory_stored_without_turn_vectors_lends_its_own_to_its_turns() -> None:
    docs = index_documents(_memory([]), TURNS)

    assert docs[1].vector == docs[0].vector == [1.0, 0.0]


def test_turn_documents_and_dates_can_be_turned_off() -> None:
    docs = index_documents(_memory([]), TURNS, RetrievalConfig(turn_documents=False, dates_in_text=False))

    assert [doc.kind for doc in docs] == ["memory"]
    assert "2023" not in docs[0].text


def test_dates_read_as_people_write_them() -> None:
    assert spoken_date(datetime(2022, 9, 1, tzinfo=UTC)) == "1 September 2022"
