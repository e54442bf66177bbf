"""The one-value facts the turns state (`fact_slots`), kept among a memory's key facts whatever
extracted it, so a later statement can replace them.

Supersession reads a memory's key facts (`usecases/supersede.py`). A small local model often writes
none (6 of 8 answers on the fact-update set), or writes them about someone it cannot name, so a
move never replaced the old address (issue #45, docs/research/extraction.md). The turns say it
whatever the model answered: each speaker's sentence that states a one-value fact the key facts do
not already state for that speaker is added as the speaker's line, as the built-in extractor
writes it ("Mina: I moved to Seoul last week.").
Within the batch a speaker's later sentence of a slot wins, as in the built-in extractor. The line
is the speaker's own words, so it is grounded by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory_engine.extraction.fact_slots import Slot, slot_of
from memory_engine.extraction.fact_subjects import stated
from memory_engine.extraction.registry import canonical_name
from memory_engine.extraction.sentences import ASSISTANT, as_sentence, clip, speakers_of, split_sentences
from memory_engine.models.domain import MAX_KEY_FACTS, Turn

# As long as the built-in extractor lets a key-fact sentence be.
SENTENCE_CHARS = 300


def said_statements(
    turns: Sequence[Turn], user_name: str, index: Mapping[str, str]
) -> dict[tuple[Slot, str], str]:
    """(slot, speaker) → the speaker's line stating it, the batch's latest of each (speakers by
    their canonical names; the unnamed assistant's remarks state no one's fact)."""
    found: dict[tuple[Slot, str], str] = {}
    for turn in turns:
        user, responder = speakers_of(turn, user_name)
        for speaker, text in ((user, turn.query), (responder, turn.answer)):
            if speaker == ASSISTANT:
                continue
            name = canonical_name(speaker, index)
            for sentence in split_sentences(text):
                slot = slot_of(sentence)
                if slot is not None:
                    found[slot, name] = f"{name}: {as_sentence(clip(sentence, SENTENCE_CHARS))}"
    return found


def with_said_statements(
    facts: Sequence[str], characters: Sequence[str], said: Mapping[tuple[Slot, str], str]
) -> list[str]:
    """`facts` with each of `said` that no fact states yet (same slot, same character) added
    after them; over MAX_KEY_FACTS, facts that state nothing make room from the end."""
    stating = {read for fact in facts if (read := stated(fact, characters)) is not None}
    added = [line for key, line in said.items() if key not in stating]
    out = list(facts)
    room = MAX_KEY_FACTS - len(added)
    for position in range(len(out) - 1, -1, -1):
        if len(out) <= room:
            break
        if stated(out[position], characters) is None:
            del out[position]
    return (out + added)[:MAX_KEY_FACTS]
