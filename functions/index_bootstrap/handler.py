"""CloudFormation custom resource: create the search index (with its mapping) at deploy time.

Create and Update call `wiring.bootstrap_index()`, retried while OpenSearch Serverless is still
propagating the data-access policy (a fresh policy answers 403 for up to a minute or so).
Delete does nothing: the index goes with its collection or domain, and a retained domain keeps
its data. Whatever happens, CloudFormation gets an answer, so a stack never hangs for an hour.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from memory_engine import wiring
from memory_engine.http import logger

PHYSICAL_ID = "memory-engine-search-index"
RETRY_SECONDS = 10.0
SPARE_MILLIS = 20_000  # left to answer CloudFormation before the function times out


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    status, reason = "SUCCESS", "index ready"
    try:
        if event["RequestType"] in {"Create", "Update"}:
            attempts = _until_ready(wiring.bootstrap_index, context, time.sleep)
            reason = f"index ready after {attempts} attempt(s)"
    except Exception as error:  # any failure must reach CloudFormation as FAILED, with its reason
        logger().exception("index bootstrap failed")
        status, reason = "FAILED", f"{type(error).__name__}: {error}"[:500]
    respond(event, status, reason)


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


def respond(event: dict[str, Any], status: str, reason: str) -> None:
    """PUT the result to the pre-signed URL CloudFormation waits on."""
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason,
            "PhysicalResourceId": event.get("PhysicalResourceId", PHYSICAL_ID),
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
        }
    ).encode()
    request = urllib.request.Request(
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": ""}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # CloudFormation's own https URL
        answer.read()
