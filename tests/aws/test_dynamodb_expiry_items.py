"""How an expiring memory is written to DynamoDB: its item and every overflow part carry the TTL."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.aws.dynamodb_items import memory_item, part_items
from memory_engine.models.domain import Memory, MemoryFields


def test_an_expiring_memorys_overflow_parts_expire_with_it() -> None:
    # Given an expiring memory too big for one item (its source text overflows into parts)
    random_text = "".join(chr(0x4E00 + (n * 7919) % 20_000) for n in range(400_000))
    memory = Memory(
        tenant="t",
        memory_id="20261206_000000_000001",
        session_uuid="s",
        parent_session_uuid="thread",
        fields=MemoryFields(summary="A long day."),
        source_dialog_uuids=[],
        first_seq=0,
        last_seq=0,
        source_text=random_text,
        created_at=datetime(2026, 12, 6, tzinfo=UTC),
        expires_at=datetime(2027, 1, 1, tzinfo=UTC),
    )
    item, chunks = memory_item(memory)

    # Then every part carries the item's TTL, so DynamoDB deletes none of them later than the item
    parts = part_items(item, chunks)
    assert parts
    assert all(part[keys.TTL_ATTRIBUTE] == item[keys.TTL_ATTRIBUTE] for part in parts)
