"""The end state every fault and race must leave: no turn lost or doubled, no memory claiming a
turn twice or pointing at a missing one, and a search index that agrees with the store."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from memory_engine.engine import Engine
from memory_engine.models.domain import TurnStatus


def assert_consistent(
    engine: Engine, tenant: str, sessions: Iterable[str], accepted: dict[str, list[str]] | None = None
) -> None:
    """`accepted`: per session, the dialog uuids answered with 2xx (each must be stored once).
    Sessions it does not name are checked for soundness only."""
    store = engine.store
    threads: set[str] = set()
    memory_ids: set[str] = set()
    for session_uuid in sessions:
        session = store.get_session(tenant, session_uuid)
        assert session is not None, f"session {session_uuid} is missing"
        threads.add(session.parent_session_uuid)
        turns = store.list_turns(tenant, session_uuid)
        counts = Counter(turn.dialog_uuid for turn in turns)
        assert not [uuid for uuid, n in counts.items() if n > 1], f"a turn of {session_uuid} is stored twice"
        if accepted is not None and session_uuid in accepted:
            assert sorted(counts) == sorted(accepted[session_uuid]), "stored turns differ from accepted ones"
        by_uuid = {turn.dialog_uuid: turn for turn in turns}
        memories = store.list_memories(tenant, session_uuid)
        claimed = Counter(uuid for memory in memories for uuid in memory.source_dialog_uuids)
        assert not [uuid for uuid, n in claimed.items() if n > 1], (
            f"a turn of {session_uuid} is in two memories"
        )
        for memory in memories:
            memory_ids.add(memory.memory_id)
            for uuid in memory.source_dialog_uuids:
                turn = by_uuid.get(uuid)
                assert turn is not None, f"memory {memory.memory_id} points at missing dialog {uuid}"
                assert (turn.status, turn.memory_id) == (TurnStatus.EXTRACTED, memory.memory_id), (
                    f"turn {uuid} of {session_uuid} does not point back at its memory {memory.memory_id}"
                )
        for turn in turns:
            if turn.status is TurnStatus.EXTRACTED:
                assert turn.dialog_uuid in claimed, f"turn {turn.dialog_uuid} is extracted into no memory"
    probe = [1.0] * engine.embedder.dimension
    indexed = {hit.doc_id for hit in engine.index.search(tenant, sorted(threads), "", probe, 100_000)}
    assert indexed == memory_ids, (
        f"the search index disagrees with the store: stale {sorted(indexed - memory_ids)},"
        f" missing {sorted(memory_ids - indexed)}"
    )
