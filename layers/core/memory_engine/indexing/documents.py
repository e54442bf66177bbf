"""How a memory is presented to the search index, and rebuilding the index from the store.

A memory becomes one "memory" document (every extracted field plus the batch's dialogue, vector of
summary + key facts) and, unless the retrieval config says otherwise, one "turn" document per
source turn (the turn's line of dialogue and date, the turn's own vector) pointing back to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from memory_engine.extraction.event_dates import days_spoken_of
from memory_engine.models.domain import Memory, Turn
from memory_engine.ports import IndexDocument, SearchIndex, Store
from memory_engine.retrieval.config import RetrievalConfig

DEFAULT_CONFIG = RetrievalConfig()
_SESSIONS_KEPT = 64  # sessions whose turns a rebuild keeps at hand


def extraction_text(turns: Sequence[Turn]) -> str:
    """The batch's dialogue, each turn cut to its `length_limit`, as extraction and search see it."""
    return "\n".join(turn.text()[: turn.length_limit] for turn in turns)


def embedding_text(memory: Memory) -> str:
    """What the dense vector of a memory encodes: its summary and key facts."""
    return "\n".join([memory.fields.summary, *memory.fields.key_facts])


def turn_embedding_text(turn: Turn) -> str:
    """What the dense vector of one turn encodes (indexed turn documents and buffered turns alike)."""
    return turn.text()


def window_text(turns: Sequence[Turn], position: int, max_chars: int | None = None) -> str:
    """What the window vector of `turns[position]` encodes: that turn with the one before and the
    one after it in the batch (its ±1 window), one line each. A question and its answer are often
    in neighbouring turns, and the window's cosine lets one find the other.

    A window longer than `max_chars` (the embedder's cap, which keeps a text's head) gives each
    of its turns an equal share instead: cut whole, it would be the turn before alone."""
    lines = [turn_embedding_text(turn) for turn in turns[max(position - 1, 0) : position + 2]]
    if max_chars is not None and sum(len(line) for line in lines) + len(lines) - 1 > max_chars:
        share = max(1, (max_chars - len(lines) + 1) // len(lines))
        lines = [line[:share] for line in lines]
    return "\n".join(lines)


def window_texts(batch: Sequence[Turn], max_chars: int | None = None) -> list[str]:
    """`window_text` of every turn of a memory's batch, in source order (what extraction embeds
    and a re-embed recomputes)."""
    return [window_text(batch, position, max_chars) for position in range(len(batch))]


def spoken_date(moment: datetime) -> str:
    """A date as people write it ("8 May 2023"), so BM25 can match a question's month or year."""
    return f"{moment.day} {moment:%B %Y}"


def turn_lexical_text(turn: Turn, config: RetrievalConfig = DEFAULT_CONFIG, line: str | None = None) -> str:
    """What BM25 matches for one turn: its line of dialogue (`line`, where the caller already has
    `turn.text()`), and its date when configured."""
    text = turn.text() if line is None else line
    return f"{text}\n{spoken_date(turn.timestamp)}" if config.dates_in_text else text


def spoken_line(indexed: str, moment: datetime | None) -> str:
    """A turn document's text back to the turn's line (its date, if indexed, taken off)."""
    return indexed.removesuffix(f"\n{spoken_date(moment)}") if moment else indexed


def lexical_text(memory: Memory, dates: Sequence[str] = ()) -> str:
    """What BM25 matches for a memory: every extracted field plus the source dialogue itself."""
    fields = memory.fields
    parts = [
        fields.summary,
        " ".join(fields.keywords),
        *fields.key_facts,
        *fields.key_dialogue,
        " ".join(fields.characters),
        fields.location,
        memory.source_text,
        *dates,
    ]
    return "\n".join(part for part in parts if part)


def index_documents(
    memory: Memory, turns: Sequence[Turn], config: RetrievalConfig = DEFAULT_CONFIG
) -> list[IndexDocument]:
    """The memory's document, then one document per source turn found in `turns`.

    A turn document's vector is the memory's turn vector, or the memory's own vector for memories
    stored before turn vectors existed; its window vector is the memory's, when it has them.
    """
    by_uuid = {turn.dialog_uuid: turn for turn in turns}
    sources = [by_uuid[uuid] for uuid in memory.source_dialog_uuids if uuid in by_uuid]
    dates = list(dict.fromkeys(spoken_date(turn.timestamp) for turn in sources))
    docs = [
        IndexDocument(
            tenant=memory.tenant,
            doc_id=memory.memory_id,
            session_uuid=memory.session_uuid,
            thread=memory.parent_session_uuid,
            text=lexical_text(memory, dates if config.dates_in_text else ()),
            vector=memory.embedding,
            source_dialog_uuids=memory.source_dialog_uuids,
            created_at=memory.created_at,
            occurred_at=sources[0].timestamp if sources else None,
            spoken_of=days_spoken_of(memory.life.event_dates),
        )
    ]
    if not config.turn_documents:
        return docs
    vectors = dict(zip(memory.source_dialog_uuids, memory.turn_embeddings, strict=False))
    windows = dict(zip(memory.source_dialog_uuids, memory.window_embeddings, strict=False))
    for position, uuid in enumerate(memory.source_dialog_uuids):
        turn = by_uuid.get(uuid)
        if turn is None:
            continue
        docs.append(
            IndexDocument(
                tenant=memory.tenant,
                doc_id=f"{memory.memory_id}:{position}",
                session_uuid=memory.session_uuid,
                thread=memory.parent_session_uuid,
                text=turn_lexical_text(turn, config),
                vector=vectors.get(uuid) or memory.embedding,
                window_vector=windows.get(uuid),
                source_dialog_uuids=[uuid],
                created_at=memory.created_at,
                kind="turn",
                memory_id=memory.memory_id,
                occurred_at=turn.timestamp,
                spoken_of=days_spoken_of(
                    [date for date in memory.life.event_dates if date.dialog_uuid == uuid]
                ),
            )
        )
    return docs


def index_document(memory: Memory) -> IndexDocument:
    """The memory's own document alone (a memory-bank fact has no turns)."""
    return index_documents(memory, ())[0]


def index_stored(
    store: Store,
    index: SearchIndex,
    memories: Sequence[Memory],
    config: RetrievalConfig = DEFAULT_CONFIG,
    turns: Sequence[Turn] | None = None,
) -> list[str]:
    """Index memories just written to the store (with their turn documents; `turns` when the
    caller has them, else read from the store), then drop any that a concurrent delete removed
    from the store meanwhile: the delete's own index delete may have run before this upsert.
    Returns the ids of those dropped (`usecases.index_purge.index_written` deletes them again
    once an eventually consistent index shows this upsert)."""
    if not memories:
        return []
    upsert(store, index, memories, config, turns)
    return drop_gone(store, index, memories)


def upsert(
    store: Store,
    index: SearchIndex,
    memories: Sequence[Memory],
    config: RetrievalConfig = DEFAULT_CONFIG,
    turns: Sequence[Turn] | None = None,
) -> None:
    """Write the memories' documents (their turn documents too) to the index, nothing else."""
    read: dict[tuple[str, str], Sequence[Turn]] = {}
    docs: list[IndexDocument] = []
    for memory in memories:
        key = (memory.tenant, memory.session_uuid)
        if turns is not None:
            session_turns = turns
        else:
            if key not in read:
                read[key] = store.list_turns(*key) if memory.session_uuid else []
            session_turns = read[key]
        docs.extend(index_documents(memory, session_turns, config))
    index.upsert(docs)


def drop_gone(store: Store, index: SearchIndex, memories: Sequence[Memory]) -> list[str]:
    """Delete from the index the memories the store no longer holds (a concurrent delete's own
    index delete may have run before their upsert); returns their ids."""
    gone = [m.memory_id for m in memories if store.get_memory(m.tenant, m.memory_id) is None]
    if gone:
        index.delete(memories[0].tenant, gone)
    return gone


def rebuild(
    store: Store,
    index: SearchIndex,
    tenant: str | None = None,
    batch: int = 500,
    progress: Callable[[int], None] | None = None,
    config: RetrievalConfig = DEFAULT_CONFIG,
) -> int:
    """Clear the index (for one tenant or all) and index every stored memory again.

    Returns the number of memories indexed (each may give several documents).
    """
    index.clear(tenant)
    pending: list[IndexDocument] = []
    count = 0
    session_turns: dict[tuple[str, str], list[Turn]] = {}
    memories: Iterable[Memory] = store.iter_memories(tenant)
    for memory in memories:
        key = (memory.tenant, memory.session_uuid)
        turns = session_turns.pop(key, None)
        if turns is None:
            turns = store.list_turns(*key)
            if len(session_turns) >= _SESSIONS_KEPT:  # memories come by id (time), sessions interleave
                del session_turns[next(iter(session_turns))]
        session_turns[key] = turns  # most recently used last
        pending.extend(index_documents(memory, turns, config))
        count += 1
        if len(pending) >= batch:
            index.upsert(pending)
            pending = []
            if progress:
                progress(count)
    if pending:
        index.upsert(pending)
    if progress:
        progress(count)
    return count
