"""Correcting a thread memory's key facts through the API, with history, as bank facts are.

An operator or the user can reword one key fact of a memory extracted from dialogue (the earlier
wording is kept as a `KeyFactRevision`, the summary's words that quoted it rewritten or, when the
summary paraphrased it, the correction added to it (`summary_after`), the memory re-embedded and
re-indexed, and the thread's statements record told when the fact now states another slot) or
retire it (kept as a `KeyFactLife` with reason "retire": from then on the memory no longer counts
as current for a question about that fact). Nothing is deleted; `GET /v1/memories/{id}/keyFacts`
reads each key fact's wordings, oldest first, the last one as it reads now.
"""

from __future__ import annotations

import re
from datetime import datetime

from memory_engine.engine import Engine
from memory_engine.errors import Conflict, InvalidInput, NotFound
from memory_engine.models.bank import (
    FactRevisionView,
    KeyFactView,
    ListKeyFactsResponse,
    PatchMemoryRequest,
    rfc3339,
)
from memory_engine.models.domain import Memory
from memory_engine.models.life import KeyFactLife, KeyFactRevision

_HANGUL = re.compile(r"[가-힣]")


def list_key_facts(engine: Engine, tenant: str, memory_id: str) -> ListKeyFactsResponse:
    """Every key fact of the memory with its wordings, oldest first."""
    memory = _extracted(engine, tenant, memory_id)
    return ListKeyFactsResponse(
        name=f"memories/{memory_id}",
        keyFacts=[_view(memory, index) for index in range(len(memory.fields.key_facts))],
    )


def patch_key_fact(
    engine: Engine, tenant: str, memory_id: str, index: int, request: PatchMemoryRequest
) -> KeyFactView:
    """Reword key fact `index` (`fact`) or retire it (`retire`); its earlier state stays as history."""
    # Here, not at the top: reading key facts (GET) needs neither the slot rules nor the index's
    # document layout (issue 46, cold start).
    from memory_engine.extraction.fact_slots import slot_of
    from memory_engine.indexing.documents import embedding_text, upsert

    memory = _extracted(engine, tenant, memory_id)
    facts = memory.fields.key_facts
    if not facts:
        raise InvalidInput(
            f"memories/{memory_id} has no key facts to correct; delete the memory instead.",
            [{"field": "index", "message": "the memory has no key facts"}],
        )
    if not 0 <= index < len(facts):
        raise InvalidInput(
            f"memories/{memory_id} has {len(facts)} key facts: send an index from 0 to {len(facts) - 1}.",
            [{"field": "index", "message": f"out of range 0..{len(facts) - 1}"}],
        )
    ended = {fact.index: fact for fact in memory.life.key_facts}
    if index in ended:
        raise Conflict(
            f"key fact {index} of memories/{memory_id} stopped holding ({ended[index].reason}): it stays "
            "as history and cannot be changed.",
            [{"field": "index", "message": "no longer holds"}],
        )
    now = engine.clock.now()
    life = memory.life
    if request.fact is None:
        ended_now = KeyFactLife(
            index=index, slot=slot_of(facts[index]) or "", invalid_at=now, reason="retire"
        )
        changed = memory.model_copy(
            update={"life": life.model_copy(update={"key_facts": [*life.key_facts, ended_now]})}
        )
    else:
        revision = KeyFactRevision(
            index=index, fact=facts[index], valid_from=_since(memory, index), invalid_at=now, reason="correct"
        )
        fields = memory.fields.model_copy(
            update={
                "key_facts": [request.fact if i == index else fact for i, fact in enumerate(facts)],
                "summary": summary_after(memory.fields.summary, facts[index], request.fact),
            }
        )
        revisions = [*life.key_fact_revisions, revision]
        changed = memory.model_copy(
            update={"fields": fields, "life": life.model_copy(update={"key_fact_revisions": revisions})}
        )
        vector = engine.embedder.embed([embedding_text(changed)], mode="passage")[0]
        changed = changed.model_copy(update={"embedding": vector})
    # Over the life just read: a correction, retirement or replacement that landed meanwhile (a
    # worker marking a key fact replaced) is never overwritten; the caller reads and decides.
    if not engine.store.update_memory(changed, expected_life=memory.life):
        if engine.store.get_memory(tenant, memory_id) is None:
            raise NotFound(
                f"memories/{memory_id} was deleted meanwhile.", [{"field": "id", "message": "deleted"}]
            )
        raise Conflict(
            f"memories/{memory_id} changed meanwhile (a key fact corrected, retired or replaced); read it "
            f"again (GET /v1/memories/{memory_id}/keyFacts) and send the change again if it still applies.",
            [{"field": "id", "message": "changed meanwhile"}],
        )
    if request.fact is not None:
        # Its words and meaning changed: the memory's documents (its turns' too) are written again.
        upsert(engine.store, engine.index, [changed], engine.retrieval)
        _restated(engine, memory, changed)
    return _view(changed, index)


def _restated(engine: Engine, before: Memory, after: Memory) -> None:
    """The thread's statements record after a correction changed what a key fact states (another
    slot or character, or none): the old statement leaves the record, a key fact it had replaced
    holds again (or is replaced by the next statement of its slot: `fact_reopening.reopen`), and the
    new one joins it, replacing and replaced as a worker's would (`supersede.supersede_copies`).
    Without it the record kept the old slot, and the new one, at the same position of the same
    memory, was never added (the record holds one statement per position)."""
    # Here, not at import: reading key facts (bank_get) loads no extraction rules.
    from memory_engine.usecases import fact_reopening, supersede, thread_statements

    old = set(thread_statements.statements(before))
    new = set(thread_statements.statements(after))
    if old == new:
        return
    withdrawn = sorted(old - new, key=lambda statement: statement.order)
    thread, keys = after.parent_session_uuid, {(s.memory_id, s.index) for s in withdrawn}
    thread_statements.withdraw(engine, after.tenant, thread, keys)
    # What the old statement had replaced is replaced by the next one of its slot, or holds again.
    fact_reopening.reopen(engine, after.tenant, thread, withdrawn)
    if new:
        supersede.supersede_copies(engine, [after])


def summary_after(summary: str, old: str, new: str) -> str:
    """The memory's summary once key fact `old` reads `new`: the words that quoted it rewritten
    (the built-in extractor's summary is the batch's own lines, so it quotes its key facts, the
    speaker's name first or not), else the correction said after it, so a hit's content never
    gives the old value as the memory's last word. The fact's earlier wording stays in its
    revision; the summary keeps no history of its own."""
    if old in summary:
        return summary.replace(old, new, 1)
    speaker, separator, words = old.partition(": ")
    new_speaker, new_separator, new_words = new.partition(": ")
    if separator and words and words in summary:
        same_speaker = new_separator and new_speaker == speaker
        return summary.replace(words, new_words if same_speaker else new, 1)
    label = "정정" if _HANGUL.search(new) else "Corrected"
    return f"{summary.rstrip()} ({label}: {new.strip()})"


def _extracted(engine: Engine, tenant: str, memory_id: str) -> Memory:
    memory = engine.store.get_memory(tenant, memory_id)
    if memory is None:
        raise NotFound(
            f"No memory memories/{memory_id}; it may be deleted already. Retrieve the thread to find "
            "a current id.",
            [{"field": "id", "message": "unknown memory"}],
        )
    if memory.is_fact:
        raise Conflict(
            f"memories/{memory_id} is a stored fact, which has no key facts: correct it with "
            f"PATCH /v1/memories/{memory_id}.",
            [{"field": "id", "message": "a fact, not an extracted memory"}],
        )
    return memory


def _since(memory: Memory, index: int) -> datetime:
    """When the key fact's current wording began: its last correction, else the memory's event time."""
    corrections = [revision for revision in memory.life.key_fact_revisions if revision.index == index]
    return corrections[-1].invalid_at if corrections else memory.stated_at


def _view(memory: Memory, index: int) -> KeyFactView:
    earlier = [revision for revision in memory.life.key_fact_revisions if revision.index == index]
    views = [
        FactRevisionView(
            fact=revision.fact,
            validFrom=None if revision.valid_from is None else rfc3339(revision.valid_from),
            invalidAt=rfc3339(revision.invalid_at),
            reason=revision.reason,
        )
        for revision in earlier
    ]
    ended = next((fact for fact in memory.life.key_facts if fact.index == index), None)
    views.append(
        FactRevisionView(
            fact=memory.fields.key_facts[index],
            validFrom=rfc3339(earlier[-1].invalid_at if earlier else memory.stated_at),
            invalidAt=None if ended is None else rfc3339(ended.invalid_at),
            reason=None if ended is None else ended.reason,
            supersededBy=None if ended is None else ended.superseded_by,
        )
    )
    return KeyFactView(index=index, revisions=views)
