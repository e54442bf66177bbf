"""A job in hand keeps its receipt alive for as long as it runs.

A queue hides a received job for its visibility timeout and hands it out again after: a job that
outlives it (a first batch of long texts, a slow model) would run a second time beside the first,
and its third receive would park it as dead although its work had finished. So while a job runs,
`held` renews its receipt every third of the visibility timeout (SQS: ChangeMessageVisibility),
from a thread of its own: the job's own stages can be long (one LLM request may take minutes),
so it is not left to them. The job's worst case still bounds it: the lease ends with the job.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from memory_engine.edge.logsafe import error_details
from memory_engine.ports import JobSource

log = logging.getLogger("memory_engine.worker")

# Renewals per visibility timeout: two may fail (a busy queue) before the job shows again.
RENEWALS_PER_VISIBILITY = 3
# How long the end of a job waits for a renewal still in flight. One SQS call may take minutes
# with its retries on a struggling network; the job's settlement (ack, retry, dead letter) must
# not wait on it (issue 42 §8: a test hung past 300 s under load), and a late renewal of a settled
# receipt is refused as stale.
JOIN_SECONDS = 5.0


class Lease:
    """One receipt's renewals: `renew` extends it by the whole visibility from now."""

    def __init__(self, source: JobSource, receipt: str, visibility_seconds: float) -> None:
        self.source = source
        self.receipt = receipt
        self.visibility_seconds = visibility_seconds
        self.renewals = 0
        self.lost = False

    @property
    def every_seconds(self) -> float:
        return self.visibility_seconds / RENEWALS_PER_VISIBILITY

    def renew(self) -> bool:
        """Extend the receipt; False once it is stale (the job was settled, or handed out again)."""
        if self.lost:
            return False
        try:
            kept = self.source.extend(self.receipt, self.visibility_seconds)
        except Exception as error:  # the queue is busy: the next renewal tries again, in time
            log.warning("could not extend a job's visibility", extra=error_details(error))
            return True
        if kept:
            self.renewals += 1
        else:
            self.lost = True
            log.warning("a running job's receipt went stale: it may be handed out again")
        return kept


@contextmanager
def held(
    source: JobSource,
    receipt: str,
    visibility_seconds: float,
    wait: Callable[[threading.Event, float], bool] = threading.Event.wait,
    join_seconds: float = JOIN_SECONDS,
) -> Iterator[Lease]:
    """Renew `receipt` every third of `visibility_seconds` until the block ends. `wait` waits on
    the stop event for a number of seconds (tests pass one that returns at once, to renew on cue).
    At the end a renewal still in flight gets `join_seconds`, then is left to finish on its own
    (a daemon thread that renews nothing more)."""
    lease = Lease(source, receipt, visibility_seconds)
    done = threading.Event()

    def renew_until_done() -> None:
        while not wait(done, lease.every_seconds) and not done.is_set():
            if not lease.renew():
                return

    thread = threading.Thread(target=renew_until_done, name="memory-engine-lease", daemon=True)
    thread.start()
    try:
        yield lease
    finally:
        done.set()
        thread.join(join_seconds)
        if thread.is_alive():
            log.warning("a renewal of a job's receipt is still in flight; the job is settled without it")
