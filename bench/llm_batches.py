"""The LLM extraction benchmark's batches (bench/llm_extraction.py): the project's own conversations
(bench/data/llm_extraction/, Korean and English, characters labelled) cut into batches of eight
turns, and a fixed sample of LoCoMo dev batches, in the order a run takes them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench.common import ROOT
from memory_engine.models.domain import Turn

OWN = ROOT / "bench" / "data" / "llm_extraction" / "conversations.json"
BATCH_SIZE = 8
# (sample_id, session, first turn): four batches of eight LoCoMo dev turns from four conversations.
LOCOMO_SAMPLE = (("conv-26", 2, 0), ("conv-30", 3, 0), ("conv-41", 2, 8), ("conv-43", 4, 0))


@dataclass
class Batch:
    """One extraction: its turns, context, and what the people in it are (when labelled)."""

    id: str
    source: str  # "own" or "locomo"
    conversation: str
    turns: list[Turn]
    language: str
    user_name: str
    expected: dict[str, list[str]] = field(default_factory=dict)
    optional: list[str] = field(default_factory=list)
    speakers: list[str] = field(default_factory=list)


def _turn(conversation: str, seq: int, speaker: str, query: str, answer: str, at: datetime) -> Turn:
    moment = at.astimezone(UTC)
    return Turn(
        tenant="bench",
        session_uuid=conversation,
        dialog_uuid=f"{conversation}-{seq}",
        seq=seq,
        query=query,
        answer=answer,
        user_name=speaker,
        npc_id=None,  # as the API stores a reply without `npc_id`: the prompt calls it "assistant"
        timestamp=moment,
        created_at=moment,
    )


def own_batches(path: Path = OWN) -> list[Batch]:
    """The own conversations cut into batches of BATCH_SIZE turns, in order."""
    batches = []
    for item in json.loads(path.read_text(encoding="utf-8"))["conversations"]:
        turns = [
            _turn(
                item["id"],
                seq,
                item["user_name"],
                t["query"],
                t["answer"],
                datetime.fromisoformat(t["timestamp"]),
            )
            for seq, t in enumerate(item["turns"])
        ]
        for number, start in enumerate(range(0, len(turns), BATCH_SIZE), start=1):
            batches.append(
                Batch(
                    id=f"{item['id']}#{number}",
                    source="own",
                    conversation=item["id"],
                    turns=turns[start : start + BATCH_SIZE],
                    language=item["language"],
                    user_name=item["user_name"],
                    expected=item["characters"],
                    optional=item.get("optional", []),
                    speakers=[item["user_name"]],
                )
            )
    return batches


def locomo_batches(path: Path | None) -> list[Batch]:
    """LOCOMO_SAMPLE's batches, one LoCoMo line = one turn as the retrieval protocol ingests them."""
    if path is None:
        return []
    from bench.locomo.data import load

    conversations = {conversation.sample_id: conversation for conversation in load(path)}
    batches = []
    for sample_id, session_number, start in LOCOMO_SAMPLE:
        session = next(s for s in conversations[sample_id].sessions if s.number == session_number)
        lines = session.turns[start : start + BATCH_SIZE]
        turns = [
            _turn(sample_id, start + offset, line.speaker, line.said(), "", session.date)
            for offset, line in enumerate(lines)
        ]
        batches.append(
            Batch(
                id=f"{sample_id}:S{session_number}+{start}",
                source="locomo",
                conversation=sample_id,
                turns=turns,
                language="en",
                user_name=lines[0].speaker,
                speakers=sorted({line.speaker for line in lines}),
            )
        )
    return batches


def in_run_order(batches: Sequence[Batch]) -> list[Batch]:
    """Every conversation's first batch, then half the LoCoMo sample, then the rest: a run cut
    short on a slow machine has measured both languages and both sources. A conversation's
    batches keep their order (each takes the characters of those before it)."""
    firsts = [b for b in batches if b.source == "own" and b.id.endswith("#1")]
    locomo = [b for b in batches if b.source == "locomo"]
    later = [b for b in batches if b.source == "own" and b not in firsts]
    half = (len(locomo) + 1) // 2
    return [*firsts, *locomo[:half], *later, *locomo[half:]]
