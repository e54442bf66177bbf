"""LoCoMo files: conversations with their turns and dates, and the questions with cleaned gold turns.

Any file in LoCoMo's format works. Gold turns are cleaned as in locomo-dev-gold.jsonl: "D8:6; D9:17"
is split, "D30:05" becomes "D30:5", "D:11:26" becomes "D11:26", and ids that do not exist in the
conversation are dropped; a question left with no gold turn is not scored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DATA_NAME = "locomo-dev.json"
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.IGNORECASE)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    caption: str = ""

    def line(self) -> str:
        """The protocol's one-document-per-turn text, "speaker: text" (the baselines index this)."""
        return f"{self.speaker}: {self.text}"

    def said(self) -> str:
        """What the engine is sent as the turn's query: the protocol lets an image turn add its
        caption, since the photo is part of what was said."""
        return f"{self.text} [image: {self.caption}]" if self.caption else self.text


@dataclass(frozen=True)
class Session:
    number: int
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    sample_id: str
    qa_index: int
    category: int
    question: str
    gold_turns: tuple[str, ...]
    gold_sessions: tuple[int, ...]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> list[Turn]:
        return [turn for session in self.sessions for turn in session.turns]


def default_data() -> Path:
    """`../shared/data/locomo-dev.json` beside the checkout, or beside any folder above it."""
    root = Path(__file__).resolve().parents[3]
    for folder in [root, *root.parents]:
        candidate = folder.parent / "shared" / "data" / DATA_NAME
        if candidate.exists():
            return candidate
    return root.parent / "shared" / "data" / DATA_NAME


def load(path: Path) -> list[Conversation]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [_conversation(sample) for sample in raw]


def parse_date(text: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023", as UTC."""
    match = _DATE.search(text)
    if match is None:
        raise ValueError(f"unrecognised LoCoMo session date {text!r}")
    hour, minute, half, day, month, year = match.groups()
    clock = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    moment = datetime.strptime(f"{day} {month} {year}", "%d %B %Y")
    return moment.replace(hour=clock, minute=int(minute), tzinfo=UTC)


def clean_evidence(evidence: list[str], known: set[str]) -> list[str]:
    """Gold dia_ids from LoCoMo's evidence strings, normalised, unknown ones dropped, in order."""
    found = [f"D{int(s)}:{int(t)}" for item in evidence for s, t in _EVIDENCE.findall(item)]
    return [dia_id for dia_id in dict.fromkeys(found) if dia_id in known]


def _conversation(sample: dict[str, Any]) -> Conversation:
    conversation = sample["conversation"]
    sessions: list[Session] = []
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.match(key)))
    for number in numbers:
        raw_turns = conversation[f"session_{number}"]
        if not raw_turns:
            continue
        turns = tuple(
            Turn(
                dia_id=turn["dia_id"],
                speaker=turn["speaker"],
                text=str(turn["text"]),
                session=number,
                caption=str(turn.get("blip_caption") or ""),
            )
            for turn in raw_turns
        )
        sessions.append(Session(number, parse_date(conversation[f"session_{number}_date_time"]), turns))
    known = {turn.dia_id for session in sessions for turn in session.turns}
    questions = []
    for qa_index, qa in enumerate(sample.get("qa", [])):
        gold = clean_evidence(qa.get("evidence", []), known)
        if gold:
            questions.append(
                Question(
                    sample_id=sample["sample_id"],
                    qa_index=qa_index,
                    category=int(qa["category"]),
                    question=str(qa["question"]),
                    gold_turns=tuple(gold),
                    gold_sessions=tuple(sorted({session_of(dia_id) for dia_id in gold})),
                )
            )
    return Conversation(sample["sample_id"], tuple(sessions), tuple(questions))


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":")[0])
