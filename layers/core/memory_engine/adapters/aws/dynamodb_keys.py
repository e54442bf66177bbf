"""The single-table design as data: key builders, index names and the table definition.

docs/dynamodb.md explains every item type and access pattern. Every partition key of engine data
starts with `T#<tenant>`; a `#` inside the tenant is doubled so no two tenants can ever produce the
same key (tenants come from the key registry and normally have none). The id at the end of a key is
taken as it is: nothing follows it.
"""

from __future__ import annotations

from typing import Any

PK, SK = "pk", "sk"
# Enabled on the table: an expiring memory's item (and its overflow parts) carry it, in epoch
# seconds, a grace period after its `expires_at`, so DynamoDB deletes for free what the sweep
# (which purges the search index too) has missed.
TTL_ATTRIBUTE = "ttl"
TTL_GRACE_SECONDS = 2 * 86_400

# Buffered turns of a thread, for retrieve (eventually consistent; sparse: buffered turns only).
GSI1, GSI1_PK, GSI1_SK = "gsi1", "gsi1pk", "gsi1sk"
# Every memory of a tenant, for reindex (keys only; sparse: memory items only).
GSI2, GSI2_PK, GSI2_SK = "gsi2", "gsi2pk", "gsi2sk"
# A thread's memories in memory-id order, for keyset pages (keys only; sparse: memory items only).
GSI3, GSI3_PK, GSI3_SK = "gsi3", "gsi3pk", "gsi3sk"
# A tenant's sessions, for the inspector's listing (keys only; sparse: session items only).
GSI4, GSI4_PK, GSI4_SK = "gsi4", "gsi4pk", "gsi4sk"
# Expiring memories by expiry time, for the sweep (keys only; sparse: memories with an expiry).
# Spread over a fixed number of partitions by memory id; the sweep queries each.
GSI5, GSI5_PK, GSI5_SK = "gsi5", "gsi5pk", "gsi5sk"
EXPIRY_SHARDS = 16
# Deletes in flight by when they began, for the sweep: one more gsi5 partition (`dynamodb_deletes`).
DELETES_BEGUN_PK = "DELETES"
# Buffered turns of a session in seq order, strongly consistent, for the extraction worker.
LSI1, LSI1_SK = "lsi1", "lsi1sk"

SESSION_SK = "SESSION"
MEMORY_SK = "MEMORY"
CHARACTERS_SK = "CHARACTERS"
FACT_COUNT_SK = "FACTS"  # in a thread's partition: its count of memory-bank facts
STATEMENTS_SK = "STATEMENTS"
SETTINGS_SK = "SETTINGS"
TURN_PREFIX = "TURN#"
MEMREF_PREFIX = "MEMREF#"
BUFFERED_PREFIX = "B#"
SEQ_WIDTH = 10  # seqs as fixed-width text so they sort as numbers


def _tenant(tenant: str) -> str:
    return "T#" + tenant.replace("#", "##")


def session_pk(tenant: str, session_uuid: str) -> str:
    """Partition of a session: its SESSION item, turns, memory references and overflow parts."""
    return f"{_tenant(tenant)}#S#{session_uuid}"


def memory_pk(tenant: str, memory_id: str) -> str:
    return f"{_tenant(tenant)}#M#{memory_id}"


def thread_pk(tenant: str, thread: str) -> str:
    """The thread's character registry; also the gsi1 partition of the thread's buffered turns and
    the gsi3 partition of its memories."""
    return f"{_tenant(tenant)}#TH#{thread}"


def tenant_settings_pk(tenant: str) -> str:
    """Partition of the tenant's settings item (its retention)."""
    return f"{_tenant(tenant)}#SETTINGS"


def deleting_pk(tenant: str) -> str:
    """Partition of the tenant's deletes in flight (`dynamodb_deletes`)."""
    return f"{_tenant(tenant)}#DELETING"


def deleting_sk(route: str, session_uuid: str, target: str) -> str:
    """A delete in flight's sort key: its route, the session it named ('#' doubled), its target."""
    return f"{route}#{session_uuid.replace('#', '##')}#{target}"


def tenant_memories(tenant: str) -> str:
    """gsi2 partition listing a tenant's memories."""
    return f"{_tenant(tenant)}#MEMORIES"


def tenant_sessions(tenant: str) -> str:
    """gsi4 partition listing a tenant's sessions."""
    return f"{_tenant(tenant)}#SESSIONS"


def session_listing_sk(thread: str, session_uuid: str) -> str:
    """A session's gsi4 sort key: by thread, then session."""
    return f"{thread.replace('#', '##')}#{session_uuid}"


def tenant_facts(tenant: str) -> str:
    """gsi4 partition listing a tenant's memory-bank facts, by scope (the inspector counts them)."""
    return f"{_tenant(tenant)}#FACTS"


def fact_listing_sk(thread: str, memory_id: str) -> str:
    """A fact's gsi4 sort key: by its scope's thread, then memory id. A thread's keys are
    consecutive: another thread that starts the same way has a doubled '#' where this one's
    separator is, which sorts before every memory id."""
    return f"{thread.replace('#', '##')}#{memory_id}"


def fact_listing_thread(sort_key: str) -> str:
    """The thread of a fact's gsi4 sort key (memory ids hold no '#')."""
    return sort_key.rsplit("#", 1)[0].replace("##", "#")


def tenant_fact_scopes(tenant: str) -> str:
    """gsi4 partition listing a tenant's fact scopes' count items (`dynamodb_fact_counts`)."""
    return f"{_tenant(tenant)}#FACTSCOPES"


def fact_scope_listing_sk(thread: str) -> str:
    """A scope's count item's gsi4 sort key: its thread, '#' doubled as in the other listings."""
    return thread.replace("#", "##")


# Above every character of a memory id: `<thread>#` + this sorts after each of the thread's facts.
AFTER_IDS = "~"


def expiry_pk(shard: int) -> str:
    """gsi5 partition `shard` (0 to EXPIRY_SHARDS - 1) of expiring memories."""
    return f"EXPIRES#{shard:02d}"


def expiry_shard(memory_id: str) -> int:
    return sum(memory_id.encode("utf-8")) % EXPIRY_SHARDS


def tenant_and_memory(pk: str) -> tuple[str, str]:
    """The tenant and memory id of a memory item's pk (`memory_pk` read back)."""
    tenant_part, _, memory_id = pk.removeprefix("T#").rpartition("#M#")
    return tenant_part.replace("##", "#"), memory_id


def seq_text(seq: int) -> str:
    return f"{seq:0{SEQ_WIDTH}d}"


def turn_sk(dialog_uuid: str) -> str:
    return TURN_PREFIX + dialog_uuid


def memref_sk(first_seq: int, memory_id: str) -> str:
    """A session's pointer to one of its memories, sorted as list_memories answers."""
    return f"{MEMREF_PREFIX}{seq_text(first_seq)}#{memory_id}"


def part_sk(owner_sk: str, number: int) -> str:
    """Overflow part `number` (1-based) of the item `owner_sk` in the same partition."""
    return f"PART#{number:03d}#{owner_sk}"


def buffered_lsi_sk(seq: int) -> str:
    return BUFFERED_PREFIX + seq_text(seq)


def buffered_gsi_sk(session_uuid: str, seq: int) -> str:
    return f"{session_uuid.replace('#', '##')}#{seq_text(seq)}"


def key(pk: str, sk: str) -> dict[str, Any]:
    return {PK: {"S": pk}, SK: {"S": sk}}


def create_table_request(table_name: str) -> dict[str, Any]:
    """`CreateTable` arguments for the engine's table (on-demand). The CDK app mirrors this.

    Enable TTL on `ttl` separately (UpdateTimeToLive), and point-in-time recovery in production.
    """
    string_keys = [PK, SK, GSI1_PK, GSI1_SK, GSI2_PK, GSI2_SK, LSI1_SK, GSI3_PK, GSI3_SK, GSI4_PK, GSI4_SK]
    string_keys += [GSI5_PK, GSI5_SK]
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": name, "AttributeType": "S"} for name in string_keys],
        "KeySchema": [{"AttributeName": PK, "KeyType": "HASH"}, {"AttributeName": SK, "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": GSI1,
                "KeySchema": [
                    {"AttributeName": GSI1_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI1_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": GSI2,
                "KeySchema": [
                    {"AttributeName": GSI2_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI2_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": GSI3,
                "KeySchema": [
                    {"AttributeName": GSI3_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI3_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                # Keys only: the turns' updates of a session's counters never write to it.
                "IndexName": GSI4,
                "KeySchema": [
                    {"AttributeName": GSI4_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI4_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": GSI5,
                "KeySchema": [
                    {"AttributeName": GSI5_PK, "KeyType": "HASH"},
                    {"AttributeName": GSI5_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
        "LocalSecondaryIndexes": [
            {
                "IndexName": LSI1,
                "KeySchema": [
                    {"AttributeName": PK, "KeyType": "HASH"},
                    {"AttributeName": LSI1_SK, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    }
