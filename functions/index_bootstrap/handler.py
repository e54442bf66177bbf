"""The search index's custom resource: the on_event handler behind CDK's Provider framework.

Create and Update call `wiring.bootstrap_index()`, retried while OpenSearch Serverless is still
propagating the data-access policy (a fresh policy answers 403 for up to a minute or so).
Delete does nothing: the index goes with its collection or domain, and a retained domain keeps
its data. The framework (infra/stack.py) answers CloudFormation: what this returns is SUCCESS,
what it raises is FAILED with the error's message, so a stack never hangs for an hour.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from memory_engine.composition import wiring
from memory_engine.edge.logsafe import logger

PHYSICAL_ID = "memory-engine-search-index"
RETRY_SECONDS = 10.0
SPARE_MILLIS = 20_000  # left for the last error to reach the framework before the timeout


def on_event(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Make sure the index exists; the answer's Data.Attempts says how many tries it took."""
    physical_id = event.get("PhysicalResourceId", PHYSICAL_ID)
    if event["RequestType"] not in {"Create", "Update"}:
        return {"PhysicalResourceId": physical_id}
    try:
        attempts = _until_ready(wiring.bootstrap_index, context, time.sleep)
    except Exception:
        logger().exception("index bootstrap failed")
        raise
    return {"PhysicalResourceId": physical_id, "Data": {"Attempts": str(attempts)}}


lambda_handler = on_event  # the entry point name every function's Lambda configuration uses


def _until_ready(bootstrap: Callable[[], None], context: Any, sleep: Callable[[float], None]) -> int:
    attempt = 0
    while True:
        attempt += 1
        try:
            bootstrap()
            return attempt
        except Exception:
            if context.get_remaining_time_in_millis() < SPARE_MILLIS + RETRY_SECONDS * 1000:
                raise
            logger().warning("index not ready yet, retrying", extra={"attempt": attempt})
            sleep(RETRY_SECONDS)
