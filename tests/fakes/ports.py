"""Fakes that implement the ports with plain Python."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from memory_engine.errors import Conflict, Unavailable
from memory_engine.models.domain import MemoryFields, Turn
from memory_engine.models.messages import Job
from memory_engine.models.queue import DeadJob, QueueSnapshot, ReceivedJob
from memory_engine.ports import EmbedMode, Extraction, ExtractionContext


class HashEmbedder:
    """Bag-of-words hashed into a small unit vector: texts sharing words are close."""

    def __init__(self, dimension: int = 64) -> None:
        self._dimension = dimension
        self.calls = 0

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str], mode: EmbedMode = "passage") -> list[list[float]]:
        self.calls += 1
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * self._dimension
        for word in re.findall(r"\w+", text.lower()):
            digest = hashlib.md5(word.encode()).digest()
            vector[digest[0] % self._dimension] += 1.0
        norm = math.sqrt(sum(value * value for value in vector)) or 1.0
        return [value / norm for value in vector]


class ListQueue:
    """Records sent jobs; tests pop them to play the worker."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.dead: list[DeadJob] = []  # nothing dies here by itself: tests park jobs by hand

    def send(self, job: Job) -> None:
        self.jobs.append(job)

    def pop_all(self) -> list[Job]:
        jobs, self.jobs = self.jobs, []
        return jobs

    def snapshot(self, tenant: str) -> QueueSnapshot:
        """The inspector's view: the tenant's sent jobs still unpopped, and its parked ones."""
        return QueueSnapshot(
            pending=[job for job in self.jobs if job.tenant == tenant],
            dead=[entry for entry in self.dead if entry.job.tenant == tenant],
        )


class StepClock:
    """A clock that moves one second per reading, so ids and times are distinct and ordered."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC)

    def now(self) -> datetime:
        self._now += timedelta(seconds=1)
        return self._now


class SetClock:
    """A clock that stands still until a test moves it."""

    def __init__(self, start: datetime | None = None) -> None:
        self.at = start or datetime(2026, 3, 18, 4, 0, 37, tzinfo=UTC)

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


class EchoExtractor:
    """Summarises a batch as its turns' text joined: every fact stays findable."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        self.batches.append([turn.dialog_uuid for turn in turns])
        summary = " ".join(turn.query for turn in turns)
        return Extraction(
            fields=MemoryFields(summary=summary, characters=sorted({t.user_name for t in turns})),
            metadata={"extractor": "echo"},
        )


class RecordingChat:
    """A ChatUpstream that answers every request with `reply` and records the bodies it got."""

    def __init__(self, reply: str = "Noted!") -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        return {
            "id": "chatcmpl-recording",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": self.reply}, "finish_reason": "stop"}
            ],
        }

    def stream(self, body: dict[str, Any]) -> Iterator[str]:
        self.bodies.append(body)
        words = re.findall(r"\S+\s*", self.reply)
        chunks = [{"role": "assistant", "content": ""}, *({"content": word} for word in words)]
        return iter(
            json.dumps(
                {"id": "chatcmpl-recording", "object": "chat.completion.chunk", "choices": [{"delta": d}]}
            )
            for d in chunks
        )


class FailingExtractor(EchoExtractor):
    """Echoes, except for the turns of the given sessions: those raise, as a broken model would."""

    def __init__(self, failing_sessions: set[str]) -> None:
        super().__init__()
        self.failing_sessions = failing_sessions

    def extract(self, turns: Sequence[Turn], context: ExtractionContext) -> Extraction:
        if any(turn.session_uuid in self.failing_sessions for turn in turns):
            raise RuntimeError(f"extraction failed for {turns[0].session_uuid}")
        return super().extract(turns, context)


class FakeUsagePlan:
    """`UsagePlanKeys` in sets: key ids in the plan, API keys left outside it, failures on demand."""

    def __init__(self) -> None:
        self.enrolled: set[str] = set()
        self.outside: set[str] = set()  # API keys that never joined the plan (a half-done add)
        self.down = False

    def add(self, key_id: str) -> None:
        self._check()
        if key_id in self.enrolled | self.outside:
            raise Conflict(f"{key_id} has a usage-plan key already")
        self.enrolled.add(key_id)

    def remove(self, key_id: str) -> bool:
        self._check()
        had = key_id in self.enrolled | self.outside
        self.enrolled.discard(key_id)
        self.outside.discard(key_id)
        return had

    def key_ids(self) -> set[str]:
        self._check()
        return set(self.enrolled)

    def _check(self) -> None:
        if self.down:
            raise Unavailable("the usage plan is unreachable")


class RecordingJobSource:
    """A JobSource that records how the worker settled what it received: ("retry", delay) or
    ("dead", error)."""

    def __init__(self) -> None:
        self.settled: list[tuple[str, object]] = []

    def receive(self, max_messages: int = 1, visibility_seconds: float = 30) -> list[ReceivedJob]:
        return []

    def ack(self, receipt: str) -> bool:
        return True

    def release(self, receipt: str, error: str | None = None) -> bool:
        return True

    def extend(self, receipt: str, visibility_seconds: float) -> bool:
        return True

    def retry_later(self, receipt: str, delay_seconds: float, error: str) -> bool:
        self.settled.append(("retry", delay_seconds))
        return True

    def bury(self, message: ReceivedJob, error: str) -> None:
        self.settled.append(("dead", error))
