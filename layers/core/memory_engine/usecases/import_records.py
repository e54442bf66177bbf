"""Import an export (docs/export.md) into a tenant: idempotent (run twice, it writes once), with
scope and thread values mapped on the way, every memory embedded by the target's model.

A session arrives with its turns and memories after it and is written as one unit, the way a
fork writes its target (`Store.create_fork`: seqs, buffer states and memory ids kept); a session
already there is left alone. Its memories then get vectors where they have none and are indexed
(an import cut off between the two is completed by the next). A memory without a session (a fact)
is written by `save_memory`, which refuses an id already stored. A thread's character registry
is merged into the target's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, InvalidInput
from memory_engine.indexing.documents import embedding_text
from memory_engine.models.domain import THREAD_SCOPE_KEY, Memory, Session, Turn, scope_key
from memory_engine.models.export import ExportRecord, ImportReport
from memory_engine.ports import ForkPlan
from memory_engine.usecases import index_purge, supersede
from memory_engine.usecases.reembed import rewrite

# Facts embedded per model call.
_FACT_BATCH = 32
# {scope key: {old value: new value}}; the key `parent_session_uuid` maps threads.
ScopeMap = Mapping[str, Mapping[str, str]]


@dataclass
class _Pending:
    session: Session
    turns: list[Turn] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)


class Importer:
    """Feed it records in file order (`add`), then `finish`; it reports what it wrote."""

    def __init__(self, engine: Engine, tenant: str, mapping: ScopeMap | None = None) -> None:
        self.engine, self.tenant, self.mapping = engine, tenant, mapping or {}
        self.report = ImportReport()
        self._session: _Pending | None = None
        self._facts: list[Memory] = []

    def add(self, record: ExportRecord, line: int = 0) -> None:
        try:
            self._add(record, record.data())
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise InvalidInput(f"line {line}: a {record.kind} record's {where}: {first['msg']}") from None
        except InvalidInput as error:
            raise InvalidInput(f"line {line}: {error.message}", error.errors) from None

    def finish(self) -> ImportReport:
        self._flush_session()
        self._flush_facts()
        return self.report

    def _add(self, record: ExportRecord, data: dict[str, object]) -> None:
        if record.kind == "export":
            return  # the header: what was exported, for people
        if record.kind == "characters":
            self._characters(str(data.get("thread", "")), data.get("registry"))
        elif record.kind == "session":
            self._flush_session()
            session = Session.model_validate({**data, "tenant": self.tenant})
            thread = self._value(THREAD_SCOPE_KEY, session.parent_session_uuid)
            self._session = _Pending(session.model_copy(update={"parent_session_uuid": thread}))
        elif record.kind == "turn":
            turn = Turn.model_validate({**data, "tenant": self.tenant})
            self._current(turn.session_uuid, "turn").turns.append(turn)
        else:
            memory = self._memory(Memory.model_validate({**data, "tenant": self.tenant}))
            if memory.session_uuid:
                self._current(memory.session_uuid, "memory").memories.append(memory)
            else:
                self._facts.append(memory)
                if len(self._facts) >= _FACT_BATCH:
                    self._flush_facts()

    def _value(self, key: str, value: str) -> str:
        return self.mapping.get(key, {}).get(value, value)

    def _memory(self, memory: Memory) -> Memory:
        """The memory under the target's names: its scope's values mapped, its thread with them."""
        scope = {key: self._value(key, value) for key, value in memory.scope.items()}
        thread = scope_key(scope) if scope else self._value(THREAD_SCOPE_KEY, memory.parent_session_uuid)
        return memory.model_copy(update={"scope": scope, "parent_session_uuid": thread})

    def _current(self, session_uuid: str, kind: str) -> _Pending:
        if self._session is None or self._session.session.session_uuid != session_uuid:
            raise InvalidInput(
                f"A {kind} of session {session_uuid} comes before that session's record: an export "
                "lists each session, then its turns and memories."
            )
        return self._session

    def _count(self, kind: str, written: int, existing: int = 0) -> None:
        report = self.report
        report.written[kind] = report.written.get(kind, 0) + written
        report.existing[kind] = report.existing.get(kind, 0) + existing

    def _flush_session(self) -> None:
        pending, self._session = self._session, None
        if pending is None:
            return
        engine, session = self.engine, pending.session
        thread = session.parent_session_uuid
        memories = [m.model_copy(update={"parent_session_uuid": thread}) for m in pending.memories]
        try:
            engine.store.create_fork(ForkPlan(target=session, turns=pending.turns, memories=memories))
            self._count("session", 1)
            self._count("turn", len(pending.turns))
            self._count("memory", len(memories))
            supersede.supersede_copies(engine, memories)
        except Conflict:  # imported before (or written since): left as it is
            self._count("session", 0, 1)
            self._count("turn", 0, len(pending.turns))
            self._count("memory", 0, len(memories))
        stored = engine.store.list_memories(self.tenant, session.session_uuid)
        unembedded = [memory for memory in stored if not memory.embedding]
        if unembedded:
            rewrite(engine.store, engine.embedder, unembedded, engine.limits.embed_max_chars, with_turns=True)
            stored = engine.store.list_memories(self.tenant, session.session_uuid)
        ids = {memory.memory_id for memory in memories}
        index_purge.index_written(engine, [memory for memory in stored if memory.memory_id in ids])

    def _flush_facts(self) -> None:
        facts, self._facts = self._facts, []
        if not facts:
            return
        engine = self.engine
        vectors = engine.embedder.embed([embedding_text(fact) for fact in facts], mode="passage")
        indexed: list[Memory] = []
        for fact, vector in zip(facts, vectors, strict=True):
            embedded = fact.model_copy(update={"embedding": vector})
            if engine.store.save_memory(embedded):
                indexed.append(embedded)
                self._count("memory", 1)
            else:
                self._count("memory", 0, 1)
                # Imported before: indexed again, in case the last import stopped before it did.
                if (stored := engine.store.get_memory(self.tenant, fact.memory_id)) is not None:
                    indexed.append(stored)
        index_purge.index_written(engine, indexed)

    def _characters(self, thread: str, registry: object) -> None:
        if not thread or not isinstance(registry, dict):
            raise InvalidInput("A characters record needs a thread and a registry {name: [aliases]}.")
        target = self._value(THREAD_SCOPE_KEY, thread)
        stored = self.engine.store.get_characters(self.tenant, target)
        merged = {name: list(aliases) for name, aliases in stored.items()}
        for name, aliases in registry.items():
            known = merged.setdefault(str(name), [])
            known += [str(alias) for alias in aliases if str(alias) not in known]
        if merged != stored:
            self.engine.store.save_characters(self.tenant, target, merged)
            self._count("characters", 1)
        else:
            self._count("characters", 0, 1)


def run(
    engine: Engine, tenant: str, records: Iterable[ExportRecord], mapping: ScopeMap | None = None
) -> ImportReport:
    """Import `records` (in their file's order) into `tenant`; returns what was written."""
    importer = Importer(engine, tenant, mapping)
    for line, record in enumerate(records, start=1):
        importer.add(record, line)
    return importer.finish()
