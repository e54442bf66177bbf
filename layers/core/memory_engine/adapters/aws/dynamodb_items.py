"""How sessions, turns and memories become DynamoDB items (low-level attribute values) and back.

Bulky text (a turn's query and answer; a memory's fields, source text and metadata) is stored as
plain attributes while the item stays well under DynamoDB's 400 KB limit. Past that, it is stored
zlib-compressed in a binary `body`, and when even that is too big, split across overflow PART
items in the same partition (`parts` says how many), written in the same transaction as the item.
Embeddings are float32 binary: 16 KB for 4096 dimensions.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from memory_engine.adapters.aws import dynamodb_keys as keys
from memory_engine.adapters.encoding import pack_vector, to_text, unpack_vector
from memory_engine.models.domain import Memory, MemoryFields, Session, Turn, TurnStatus
from memory_engine.models.life import MemoryLife

Item = dict[str, Any]

ITEM_LIMIT_BYTES = 400 * 1024
# Above this estimated size the payload is compressed; below it, items stay readable in the console.
INLINE_LIMIT_BYTES = 300_000
PART_BYTES = 300_000
# A turn item is projected whole into lsi1 while it is buffered (projection ALL), and DynamoDB
# counts an item with its local-index copies against the 400 KB limit: a turn item stays under
# half of it, with room for a 4096-dimensional vector (16 KB) stored on it later. moto and dynalite
# take a bigger one, so tests/aws/test_dynamodb_store.py checks the size written.
TURN_ITEM_BYTES = 180_000
_MIN_FIRST_CHUNK = 1024


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def b(value: bytes) -> dict[str, bytes]:
    return {"B": value}


def text(item: Mapping[str, Any], name: str, default: str | None = None) -> str | None:
    value = item.get(name)
    return default if value is None else str(value["S"])


def required(item: Mapping[str, Any], name: str) -> str:
    """A string attribute every item of its kind carries."""
    return str(item[name]["S"])


def number(item: Mapping[str, Any], name: str, default: int = 0) -> int:
    value = item.get(name)
    return default if value is None else int(value["N"])


def item_size(item: Mapping[str, Any]) -> int:
    """An upper bound of DynamoDB's size of an item: names plus values, numbers counted generously."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Mapping[str, Any]) -> int:
    kind, inner = next(iter(value.items()))
    if kind == "S":
        return len(str(inner).encode())
    if kind == "B":
        return len(inner)
    if kind == "N":
        return 21
    if kind == "L":
        return 3 + sum(1 + _value_size(element) for element in inner)
    return len(json.dumps(inner, default=str).encode())


# -- bulky payloads ----------------------------------------------------------------------------


def pack(
    base: Item, payload: Mapping[str, str], limit: int = INLINE_LIMIT_BYTES, *, parts: int = 0
) -> tuple[Item, list[bytes]]:
    """The item with its payload inline, or compressed into `body` plus overflow chunks; the item
    itself stays within `limit` bytes (overflow parts take up to PART_BYTES each). `parts`: at
    least that many overflow chunks, for a rewrite of a record that had them (see `_spread`)."""
    inline = base | {name: s(value) for name, value in payload.items()}
    if item_size(inline) <= limit and not parts:
        return inline, []
    body = zlib.compress(json.dumps(dict(payload), ensure_ascii=False).encode(), 6)
    # The item keeps its own attributes beside the body's first chunk, and those can be large (a
    # memory's vectors: its own, one per turn and one per turn's window, 17 x 16 KB at 4096
    # dimensions), so the first chunk gets only the room they leave; the rest go to parts.
    # The room also leaves out the `body` and `parts` attributes' own names and count.
    overhead = item_size({"body": b(b""), "parts": n(0)})
    room = max(min(limit, PART_BYTES) - item_size(base) - overhead, _MIN_FIRST_CHUNK)
    starts = range(room, len(body), PART_BYTES)
    chunks = [body[:room], *(body[start : start + PART_BYTES] for start in starts)]
    if len(chunks) - 1 < parts:
        chunks = _spread(body, room, parts)
    return base | {"body": b(chunks[0]), "parts": n(len(chunks) - 1)}, chunks[1:]


def _spread(body: bytes, room: int, parts: int) -> list[bytes]:
    """`body` as a first chunk of at most `room` bytes and exactly `parts` overflow chunks, none
    larger than pack's own: a record rewritten smaller is put over every part it had, so no part
    is ever left to delete (the rewriting roles need no DeleteItem). A body shorter than the
    chunks is padded with zero bytes, which zlib leaves unread after the stream's end."""
    body = body.ljust(parts + 1, b"\0")
    first = min(room, len(body) - parts)
    rest = body[first:]
    bounds = [len(rest) * number // parts for number in range(parts + 1)]
    return [body[:first], *(rest[start:end] for start, end in pairwise(bounds))]


def part_count(item: Mapping[str, Any]) -> int:
    return number(item, "parts")


def part_items(owner: Mapping[str, Any], chunks: Sequence[bytes]) -> list[Item]:
    pk, owner_sk = owner[keys.PK]["S"], owner[keys.SK]["S"]
    # An expiring owner's parts expire with it: DynamoDB's TTL leaves no orphan part behind.
    ttl = {keys.TTL_ATTRIBUTE: owner[keys.TTL_ATTRIBUTE]} if keys.TTL_ATTRIBUTE in owner else {}
    return [
        {
            keys.PK: s(pk),
            keys.SK: s(keys.part_sk(owner_sk, number)),
            "kind": s("part"),
            "body": b(chunk),
            **ttl,
        }
        for number, chunk in enumerate(chunks, start=1)
    ]


def part_keys(owner: Mapping[str, Any]) -> list[dict[str, Any]]:
    pk, owner_sk = owner[keys.PK]["S"], owner[keys.SK]["S"]
    return [keys.key(pk, keys.part_sk(owner_sk, number)) for number in range(1, part_count(owner) + 1)]


def unpack(
    item: Mapping[str, Any], names: Sequence[str], parts: Sequence[Mapping[str, Any]] = ()
) -> dict[str, str]:
    """The payload fields, from plain attributes or from `body` and its parts (in part order)."""
    if "body" not in item:
        return {name: text(item, name, "") or "" for name in names}
    ordered = sorted(parts, key=lambda part: part[keys.SK]["S"])
    body = bytes(item["body"]["B"]) + b"".join(bytes(part["body"]["B"]) for part in ordered)
    decoded: dict[str, str] = json.loads(zlib.decompress(body))
    return decoded


# -- sessions ----------------------------------------------------------------------------------


def session_listing_keys(tenant: str, thread: str, session_uuid: str) -> Item:
    """The sparse gsi4 keys that list a session under its tenant."""
    return {
        keys.GSI4_PK: s(keys.tenant_sessions(tenant)),
        keys.GSI4_SK: s(keys.session_listing_sk(thread, session_uuid)),
    }


def fact_listing_keys(tenant: str, thread: str, memory_id: str) -> Item:
    """The sparse gsi4 keys that list a memory-bank fact under its tenant, by scope."""
    return {
        keys.GSI4_PK: s(keys.tenant_facts(tenant)),
        keys.GSI4_SK: s(keys.fact_listing_sk(thread, memory_id)),
    }


def session_item(session: Session, next_seq: int, buffered: int) -> Item:
    return {
        **keys.key(keys.session_pk(session.tenant, session.session_uuid), keys.SESSION_SK),
        **session_listing_keys(session.tenant, session.parent_session_uuid, session.session_uuid),
        "kind": s("session"),
        "tenant": s(session.tenant),
        "session_uuid": s(session.session_uuid),
        "parent_session_uuid": s(session.parent_session_uuid),
        "user_name": s(session.user_name),
        "language": s(session.language),
        "created_at": s(to_text(session.created_at)),
        "next_seq": n(next_seq),
        "buffered": n(buffered),
    }


def session_from(item: Mapping[str, Any]) -> Session:
    return Session(
        tenant=required(item, "tenant"),
        session_uuid=required(item, "session_uuid"),
        parent_session_uuid=required(item, "parent_session_uuid"),
        user_name=required(item, "user_name"),
        language=required(item, "language"),
        created_at=required(item, "created_at"),  # pydantic parses the ISO text
        next_seq=number(item, "next_seq"),
    )


# -- turns -------------------------------------------------------------------------------------

TURN_PAYLOAD = ("query", "answer")


def buffered_keys(tenant: str, session_uuid: str, thread: str, seq: int) -> Item:
    """The sparse index keys a turn carries while it waits in the buffer (lsi1 and gsi1)."""
    return {
        keys.LSI1_SK: s(keys.buffered_lsi_sk(seq)),
        keys.GSI1_PK: s(keys.thread_pk(tenant, thread)),
        keys.GSI1_SK: s(keys.buffered_gsi_sk(session_uuid, seq)),
    }


def turn_item(turn: Turn, thread: str) -> tuple[Item, list[bytes]]:
    base: Item = {
        **keys.key(keys.session_pk(turn.tenant, turn.session_uuid), keys.turn_sk(turn.dialog_uuid)),
        "kind": s("turn"),
        "tenant": s(turn.tenant),
        "session_uuid": s(turn.session_uuid),
        "dialog_uuid": s(turn.dialog_uuid),
        "thread": s(thread),
        "seq": n(turn.seq),
        "user_name": s(turn.user_name),
        "type": n(int(turn.type)),
        "timestamp": s(to_text(turn.timestamp)),
        "created_at": s(to_text(turn.created_at)),
        "status": s(turn.status.value),
        "length_limit": n(turn.length_limit),
    }
    if turn.npc_id is not None:
        base["npc_id"] = s(turn.npc_id)
    if turn.memory_id is not None:
        base["memory_id"] = s(turn.memory_id)
    if turn.status is TurnStatus.BUFFERED:
        base |= buffered_keys(turn.tenant, turn.session_uuid, thread, turn.seq)
    if turn.embedding is not None:
        base["embedding"] = b(pack_vector(turn.embedding))
    if turn.memory_ttl_seconds is not None:
        base["memory_ttl_seconds"] = n(turn.memory_ttl_seconds)
    return pack(base, {"query": turn.query, "answer": turn.answer}, TURN_ITEM_BYTES)


def turn_from(item: Mapping[str, Any], parts: Sequence[Mapping[str, Any]] = ()) -> Turn:
    payload = unpack(item, TURN_PAYLOAD, parts)
    return Turn(
        tenant=required(item, "tenant"),
        session_uuid=required(item, "session_uuid"),
        dialog_uuid=required(item, "dialog_uuid"),
        seq=number(item, "seq"),
        query=payload["query"],
        answer=payload["answer"],
        user_name=required(item, "user_name"),
        npc_id=text(item, "npc_id"),
        type=number(item, "type"),  # validated into TurnType
        timestamp=required(item, "timestamp"),  # pydantic parses the ISO text
        created_at=required(item, "created_at"),  # pydantic parses the ISO text
        status=TurnStatus(required(item, "status")),
        memory_id=text(item, "memory_id"),
        length_limit=number(item, "length_limit"),
        embedding=unpack_vector(bytes(item["embedding"]["B"])) if "embedding" in item else None,
        memory_ttl_seconds=number(item, "memory_ttl_seconds") if "memory_ttl_seconds" in item else None,
    )


# -- memories ----------------------------------------------------------------------------------

# `scope` is a payload field too: a caller's scope can be long, so it overflows like the rest.
MEMORY_PAYLOAD = ("fields", "source_text", "metadata", "scope", "life")


def memory_item(memory: Memory, parts: int = 0) -> tuple[Item, list[bytes]]:
    """The memory's item and overflow chunks; `parts`: at least that many (`pack`)."""
    base: Item = {
        **keys.key(keys.memory_pk(memory.tenant, memory.memory_id), keys.MEMORY_SK),
        "kind": s("memory"),
        "tenant": s(memory.tenant),
        "memory_id": s(memory.memory_id),
        "session_uuid": s(memory.session_uuid),
        "parent_session_uuid": s(memory.parent_session_uuid),
        "source_dialog_uuids": {"L": [s(uuid) for uuid in memory.source_dialog_uuids]},
        "first_seq": n(memory.first_seq),
        "last_seq": n(memory.last_seq),
        "created_at": s(to_text(memory.created_at)),
        keys.GSI2_PK: s(keys.tenant_memories(memory.tenant)),
        keys.GSI2_SK: s(memory.memory_id),
        keys.GSI3_PK: s(keys.thread_pk(memory.tenant, memory.parent_session_uuid)),
        keys.GSI3_SK: s(memory.memory_id),
    }
    if memory.is_fact:
        base |= fact_listing_keys(memory.tenant, memory.parent_session_uuid, memory.memory_id)
    if memory.expires_at is not None:
        base.update(expiry_attributes(memory))
        if memory.is_fact and not memory.session_uuid:
            # Only the sweep removes a fact, with its scope's count (`dynamodb_fact_counts`).
            del base[keys.TTL_ATTRIBUTE]
    if memory.embedding:
        base["embedding"] = b(pack_vector(memory.embedding))
    if memory.turn_embeddings:
        # One float32 vector per source turn, in source order (binary: 8 × 384 floats = 12 KB).
        base["turn_embeddings"] = {"L": [b(pack_vector(vector)) for vector in memory.turn_embeddings]}
    if memory.window_embeddings:  # one per source turn too: its ±1 window's vector
        base["window_embeddings"] = {"L": [b(pack_vector(vector)) for vector in memory.window_embeddings]}
    payload = {
        "fields": memory.fields.model_dump_json(),
        "source_text": memory.source_text,
        "metadata": json.dumps(memory.metadata, ensure_ascii=False),
        "scope": json.dumps(memory.scope, ensure_ascii=False),
        "life": memory.life.model_dump_json(exclude_defaults=True),
    }
    return pack(base, payload, parts=parts)


def memory_from(item: Mapping[str, Any], parts: Sequence[Mapping[str, Any]] = ()) -> Memory:
    payload = unpack(item, MEMORY_PAYLOAD, parts)
    embedding = item.get("embedding")
    turn_embeddings = item.get("turn_embeddings", {}).get("L", [])
    window_embeddings = item.get("window_embeddings", {}).get("L", [])
    return Memory(
        tenant=required(item, "tenant"),
        memory_id=required(item, "memory_id"),
        session_uuid=required(item, "session_uuid"),
        parent_session_uuid=required(item, "parent_session_uuid"),
        fields=MemoryFields.model_validate_json(payload["fields"]),
        source_dialog_uuids=[element["S"] for element in item["source_dialog_uuids"]["L"]],
        first_seq=number(item, "first_seq"),
        last_seq=number(item, "last_seq"),
        embedding=unpack_vector(bytes(embedding["B"])) if embedding else [],
        turn_embeddings=[unpack_vector(bytes(vector["B"])) for vector in turn_embeddings],
        window_embeddings=[unpack_vector(bytes(vector["B"])) for vector in window_embeddings],
        source_text=payload["source_text"],
        created_at=required(item, "created_at"),  # pydantic parses the ISO text
        metadata=json.loads(payload["metadata"] or "{}"),
        # Items written before scopes existed have none: an engine memory's stored scope is {}.
        scope=json.loads(payload.get("scope") or "{}"),
        expires_at=text(item, "expires_at"),
        # Items written before facts had a life: a fact that holds, stated when created.
        life=MemoryLife.model_validate_json(payload.get("life") or "{}"),
    )


def expiry_attributes(memory: Memory) -> Item:
    """An expiring memory's `expires_at`, its gsi5 keys (the sweep's listing) and its TTL."""
    assert memory.expires_at is not None
    expires = to_text(memory.expires_at)
    return {
        "expires_at": s(expires),
        keys.GSI5_PK: s(keys.expiry_pk(keys.expiry_shard(memory.memory_id))),
        keys.GSI5_SK: s(f"{expires}#{memory.memory_id}"),
        keys.TTL_ATTRIBUTE: n(int(memory.expires_at.timestamp()) + keys.TTL_GRACE_SECONDS),
    }


_VECTORS = frozenset({"embedding", "turn_embeddings", "window_embeddings"})


def memory_without_vectors_from(item: Mapping[str, Any], parts: Sequence[Mapping[str, Any]] = ()) -> Memory:
    """`memory_from` with its vectors (`embedding`, `turn_embeddings`, `window_embeddings`) left
    empty (not decoded)."""
    return memory_from({key: value for key, value in item.items() if key not in _VECTORS}, parts)


def memref_item(memory: Memory) -> Item:
    """The session's pointer to the memory: list_memories reads these, strongly consistent."""
    return {
        **keys.key(
            keys.session_pk(memory.tenant, memory.session_uuid),
            keys.memref_sk(memory.first_seq, memory.memory_id),
        ),
        "kind": s("memref"),
        "memory_id": s(memory.memory_id),
    }
