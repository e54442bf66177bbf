"""`memory-engine smoke --api URL --key KEY`: walk a running API end to end through the Python client,
under a throw-away thread of its own, print each check with its time, clean up, and exit 1 when a
check failed (docs/smoke.md says what each failure usually means).

Every check after a failed one is skipped (each builds on the one before), but the clean-up runs.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from memory_engine_client import ApiError, MemoryEngine, NotFound
from memory_engine_client.transport import DEFAULT_TIMEOUT

TURNS = 20  # the default extraction threshold: the 20th turn queues extraction of two batches of 8
FACT_TURN = 3
FACTS = {
    FACT_TURN: "My cat Mochi was born in Lisbon and loves sardines.",
    7: "우리 집 고양이 보리는 이번 달에 세 살이 됐어.",
}
FILLER = [
    "I spent the morning fixing the garden fence.",
    "The weather turned cold so I made pumpkin soup.",
    "Work was busy, we shipped the quarterly report.",
    "I started reading a novel about lighthouse keepers.",
]
CUTOFF = 10
# How long a fact just created may take to be found (see `Smoke.bank`).
BANK_WAIT = 2.0


class CheckFailed(Exception):
    """A check whose answer came back but was not what a working stack answers."""


@dataclass
class Smoke:
    api: MemoryEngine
    wait: float
    chat_model: str | None
    out: TextIO
    run: str = field(default_factory=lambda: f"smoke-{uuid.uuid4().hex[:8]}")
    failed: bool = False

    @property
    def session(self) -> str:
        return f"{self.run}-s"

    @property
    def fork_session(self) -> str:
        return f"{self.run}-fork"

    def check(self, name: str, step: Callable[[], str]) -> None:
        """Run one check unless an earlier one failed; print its outcome and time."""
        if self.failed:
            self.line("skip", name, None, "an earlier check failed")
            return
        started = time.perf_counter()
        try:
            note = step()
        except (ApiError, CheckFailed) as error:
            self.failed = True
            self.line("FAIL", name, time.perf_counter() - started, f"{type(error).__name__}: {error}")
            return
        self.line("ok", name, time.perf_counter() - started, note)

    def line(self, outcome: str, name: str, seconds: float | None, note: str) -> None:
        timing = f"{seconds * 1000:8,.0f} ms" if seconds is not None else " " * 11
        print(f"  {outcome:<5} {name:<36} {timing}  {note}", file=self.out, flush=True)

    def health(self) -> str:
        answer = self.api.health()
        return f"{answer.service} is {answer.status}"

    def consolidate(self) -> str:
        turns = [
            {
                "uuid": f"turn-{n}",
                "query": FACTS.get(n, f"{FILLER[n % len(FILLER)]} (day {n})"),
                "answer": "I see, tell me more.",
            }
            for n in range(1, TURNS + 1)
        ]
        sent = self.api.consolidate_conversation(
            self.session, self.run, turns, user_name="Smoke", language="en"
        )
        return f"{sent} turns into thread {self.run}: the last one queues extraction"

    def extraction(self) -> str:
        deadline = time.monotonic() + self.wait
        while True:
            hits = self.api.retrieve(self.run, "day", limit=20).data
            memories = [hit for hit in hits if hit.kind == "memory"]
            if len(memories) >= 2:
                return f"{len(memories)} memories extracted"
            if time.monotonic() > deadline:
                raise CheckFailed(
                    f"{len(memories)} memories after {self.wait:.0f} s (2 expected): is the worker "
                    "running? (a memory shows in retrieve once the search index has refreshed: "
                    "OpenSearch Serverless takes 10-30 s, well within --wait)"
                )
            time.sleep(1.0)

    def retrieve(self) -> str:
        budget = 400
        answer = self.api.retrieve(self.run, "Where was Mochi the cat born?", limit=5, max_tokens=budget)
        fact = f"turn-{FACT_TURN}"
        hit = next(
            (hit for hit in answer.data if hit.kind == "memory" and fact in hit.source_dialog_uuids), None
        )
        if hit is None:
            raise CheckFailed(f"no memory built from {fact} among {[h.memory_id for h in answer.data]}")
        if fact not in [turn.dialog_uuid for turn in hit.evidence or []]:
            raise CheckFailed(f"memory {hit.memory_id} came without {fact} in its evidence")
        if answer.tokens is None or answer.tokens > budget:
            raise CheckFailed(f"max_tokens {budget} answered {answer.tokens} tokens")
        return f"memory {hit.memory_id}, evidence {fact}, {answer.tokens} tokens"

    def fork(self) -> str:
        forked = self.api.fork(self.session, self.fork_session, f"turn-{CUTOFF}").data
        if forked.copied_dialogs != CUTOFF or not forked.copied_memories:
            raise CheckFailed(f"{forked.copied_dialogs} turns and {forked.copied_memories} memories copied")
        return f"{len(forked.copied_memories)} memories and {forked.copied_dialogs} turns copied"

    def delete(self) -> str:
        deleted = self.api.delete(self.session, f"turn-{FACT_TURN}").data
        if len(deleted.deleted_memories) != 1 or not deleted.rebuffered_dialogs:
            raise CheckFailed(f"deleted {deleted.deleted_memories}, re-buffered {deleted.rebuffered_dialogs}")
        back = len(deleted.rebuffered_dialogs)
        return f"memory {deleted.deleted_memories[0]} went with it, {back} turns re-buffered"

    def bank(self) -> str:
        scope = {"smoke_run": self.run}
        created = self.api.bank_create("The smoke test's favourite colour is teal.", scope)
        try:
            # Found at once, whatever the index's refresh (the store answers for young facts);
            # polled a moment only for the table's own listing (a DynamoDB index, under a second).
            deadline = time.monotonic() + BANK_WAIT
            while True:
                hits = self.api.bank_search(scope, "Which colour does it like?").retrieved_memories
                if hits and hits[0].memory.name == created.name:
                    break
                if time.monotonic() > deadline:
                    raise CheckFailed(
                        f"a fact created {BANK_WAIT:.0f} s ago is not found by its own scope's search "
                        f"(found {[hit.memory.name for hit in hits]}): the retrieve function reads "
                        "young facts from the table's thread listing (gsi3), older ones through the "
                        "index: check its table and index grants"
                    )
                time.sleep(0.5)
        finally:
            self.api.bank_delete(created.name)
        return f"{created.name} created, found, deleted"

    def forget_user(self) -> str:
        userid = str(uuid.uuid4())
        fact = self.api.bank_create("The smoke test's user likes tea.", {"userid": userid})
        gone = self.api.forget_user(userid)
        try:
            self.api.bank_get(fact.name)
        except NotFound:
            return f"user {userid}: {gone.deleted_memories} memories forgotten"
        raise CheckFailed(f"{fact.name} is still there after forgetting user {userid}")

    def chat(self) -> str:
        assert self.chat_model is not None
        userid = str(uuid.uuid4())
        request = {
            "model": self.chat_model,
            "messages": [{"role": "user", "content": "Say hello in three words."}],
            "userid": userid,
        }
        try:
            answer = self.api.chat_completion(request)
            text = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as error:
            raise CheckFailed(f"not a chat completion: {error!r}") from None
        finally:
            self.api.forget_user(userid)
        return f"{self.chat_model} answered {len(text or '')} characters"

    def clean_up(self) -> str:
        """Delete every turn (and so every memory) of both sessions; a session goes with its last
        turn, so nothing of the run is left (checked)."""
        deleted = 0
        for session, last in ((self.fork_session, CUTOFF), (self.session, TURNS)):
            for n in range(1, last + 1):
                try:
                    self.api.delete(session, f"turn-{n}")
                    deleted += 1
                except NotFound:
                    pass  # never written (an earlier check failed) or deleted by a check
            try:
                left = self.api.show_session(session)
            except NotFound:
                continue
            raise CheckFailed(
                f"{session} is still there with {len(left.turns)} turns, {len(left.memories)} memories"
            )
        return f"{deleted} turns deleted; sessions {self.session} and {self.fork_session} are gone"


def smoke(
    url: str | None,
    key: str | None,
    *,
    wait: float = 180.0,
    chat_model: str | None = None,
    out: TextIO = sys.stdout,
    timeout: float | None = None,
) -> int:
    """Walk the API; 0 when every check passed (chat may be skipped), 1 otherwise. `timeout`
    bounds each request (None: the client's default, under API Gateway's 29 s)."""
    started = time.perf_counter()
    with MemoryEngine(url, key, timeout=DEFAULT_TIMEOUT if timeout is None else timeout) as api:
        walk = Smoke(api, wait, chat_model, out)
        print(f"memory-engine smoke against {api.connection.url} (run {walk.run})", file=out)
        walk.check("health", walk.health)
        walk.check("consolidate past the threshold", walk.consolidate)
        walk.check("wait for extraction", walk.extraction)
        walk.check("retrieve with evidence and max_tokens", walk.retrieve)
        walk.check(f"fork at turn {CUTOFF}", walk.fork)
        walk.check(f"delete turn {FACT_TURN} with cascade", walk.delete)
        walk.check("bank create / search / delete", walk.bank)
        walk.check("forget a chat user", walk.forget_user)
        if chat_model:
            walk.check("chat with memory", walk.chat)
        else:
            walk.line(
                "skip", "chat with memory", None, "pass --chat-model MODEL when the stack has an upstream"
            )
        failed_before = walk.failed
        walk.failed = False  # the clean-up runs whatever failed
        walk.check("clean up", walk.clean_up)
        walk.failed = walk.failed or failed_before
    outcome = "FAILED" if walk.failed else "passed"
    print(f"{outcome} in {time.perf_counter() - started:.1f} s", file=out)
    return 1 if walk.failed else 0
