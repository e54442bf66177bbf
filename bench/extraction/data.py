"""The labelled extraction set (bench/data/extraction/): conversations cut into the engine's
batches, each memory with what a reader expects to find in it.

A file is a list of conversations: `id`, `split` ("dev" by default; "held-out" for the ones written
after the built-in extractor's changes and never tuned on), `language`, `user_name`, `start` (the
first turn's time; turns follow a minute apart), `vocabulary` (every acceptable keyword of the
conversation, in base form, space-separated, lower case), `turns` (`[query, answer]` pairs; the
answers are the assistant's) and `memories`, one per batch of `BATCH` consecutive turns, in order:
`characters` (names, the assistant as "assistant"), `keywords` (the content words the memory is
about), `location` (places, times and weather the turns state), `intent` (phrases of the wishes,
plans and requests stated; empty when none is) and `key_facts` (one entry per fact: a list of cues
that must all occur in a fact stating it, each cue a `|`-separated list of alternatives).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from memory_engine.models.domain import Turn

FOLDER = Path(__file__).resolve().parents[1] / "data" / "extraction"
FILES = (FOLDER / "english.json", FOLDER / "korean.json", FOLDER / "heldout.json")
BATCH = 8  # the engine's default batch size (docs/api.md)


class ExpectedMemory(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    characters: list[str]
    keywords: list[str]
    location: list[str]
    intent: list[str]
    key_facts: list[list[str]]


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    split: str = "dev"  # "held-out": written after the extractor's changes, never tuned on
    language: str
    user_name: str
    start: datetime
    vocabulary: str
    turns: list[tuple[str, str]] = Field(min_length=1)
    memories: list[ExpectedMemory]

    def batches(self) -> list[list[Turn]]:
        """The conversation as the worker cuts it: consecutive batches of `BATCH` turns."""
        turns = [
            Turn(
                tenant="bench",
                session_uuid=self.id,
                dialog_uuid=f"{self.id}:{seq}",
                seq=seq,
                query=query,
                answer=answer,
                user_name=self.user_name,
                timestamp=self.start + timedelta(minutes=seq),
                created_at=self.start,
            )
            for seq, (query, answer) in enumerate(self.turns)
        ]
        return [turns[i : i + BATCH] for i in range(0, len(turns), BATCH)]

    def memory_ids(self) -> list[str]:
        """How a memory of the set is named in recorded outputs: `<conversation id>/<batch number>`."""
        return [f"{self.id}/{index}" for index in range(len(self.memories))]


def load(paths: tuple[Path, ...] = FILES) -> list[Conversation]:
    """Every conversation of the set, checked: one labelled memory per batch."""
    conversations: list[Conversation] = []
    for path in paths:
        for raw in _read(path):
            conversation = Conversation.model_validate(raw)
            if len(conversation.batches()) != len(conversation.memories):
                raise ValueError(
                    f"{path.name}: {conversation.id} has {len(conversation.batches())} batches of "
                    f"{BATCH} turns but {len(conversation.memories)} labelled memories"
                )
            conversations.append(conversation)
    return conversations


def _read(path: Path) -> list[dict[str, object]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path.name}: expected a list of conversations")
    return data
