"""Telling a retried fork from a real conflict, from what the target holds (no provenance stored).

A fork's store write may succeed while what follows it (the index write, the extraction job) fails:
the client gets 503 and retries into a target that now exists. The retry finishes the job when the
target is exactly the fork asked for, which needs no record of where the target came from:

- a fork copies the source's turns verbatim, `created_at` included, and that is stamped by the
  engine when a turn is consolidated (or recorded), so no session written turn by turn matches it;
- every copied memory names its original in `metadata.forked_from`, and memories come to a
  session only by a fork or by its own extraction (which writes no `forked_from`).

So a target is that fork when its thread, speaker and language are the request's, its turns are the
source's up to the cutoff (uuid, seq, words, times) and nothing was appended since, and each of its
memories is a copy of a distinct memory the source still holds. Anything else (another cutoff,
another thread, a session consolidated under that uuid, a target that has moved on) is a Conflict,
as is a source dialog or memory deleted between the two attempts.

The one look-alike is another fork, at the same cutoff, of a session sharing this source's history
(a sibling fork, or the source's own original) when no memory was copied: then the target already
holds exactly what this fork would write, and answering 200 for it is true.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_engine.models.domain import Memory, Session, Turn
from memory_engine.ports import Store

FORKED_FROM = "forked_from"
_NOT_COPIED = {"tenant", "session_uuid", "status", "memory_id"}


def finished_fork(
    store: Store, source: Session, kept: Sequence[Turn], target: Session, thread: str
) -> tuple[list[Turn], list[Memory]] | None:
    """The target's turns and memories (in the source's memory order) when `target` is exactly the
    fork of `source` keeping `kept` (its turns up to the cutoff) into `thread`; else None."""
    if source.session_uuid == target.session_uuid or not kept:
        return None
    if (target.parent_session_uuid, target.user_name, target.language) != (
        thread,
        source.user_name,
        source.language,
    ):
        return None
    if target.next_seq != kept[-1].seq + 1:
        return None
    turns = store.list_turns(target.tenant, target.session_uuid)
    if [_copied(turn) for turn in turns] != [_copied(turn) for turn in kept]:
        return None
    order = {
        memory.memory_id: n
        for n, memory in enumerate(store.list_memories(source.tenant, source.session_uuid))
    }
    memories = store.list_memories(target.tenant, target.session_uuid)
    originals = [memory.metadata.get(FORKED_FROM) for memory in memories]
    if len(set(originals)) != len(originals) or not all(isinstance(o, str) and o in order for o in originals):
        return None
    return turns, sorted(memories, key=lambda memory: order[str(memory.metadata[FORKED_FROM])])


def _copied(turn: Turn) -> dict[str, object]:
    """What a fork copies unchanged: all of a turn but its session and its extraction state."""
    return turn.model_dump(exclude=_NOT_COPIED)
