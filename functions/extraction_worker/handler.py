"""SQS FIFO → worker: one record is one job (`models.messages.Job`), routed by `usecases.jobs`.

Not an HTTP route: the CDK app wires it to the queue (functions/routes.py lists it in WORKERS).
Partial batch responses: a record that fails is reported by id and comes back after the visibility
timeout; after the queue's maxReceiveCount it is parked in the dead-letter queue, never dropped.
`SqsFifoPartialProcessor` (a Powertools `BatchProcessor` for `EventType.SQS`) keeps FIFO order:
once a record fails, the later records of the same session are reported failed too, unprocessed,
while other sessions in the batch go on. Processing is idempotent (the store claims turns with
conditions), so a record delivered twice, or retried after a crash, writes one memory.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from memory_engine import wiring
from memory_engine.http import logger
from memory_engine.models.messages import parse_job
from memory_engine.observability import record_job
from memory_engine.usecases import jobs

processor = SqsFifoPartialProcessor(skip_group_on_error=True)
# A batch whose every record failed is answered like any other (all ids in batchItemFailures) rather
# than raised: the outcome for the queue is the same, and the response says which records they were.
processor.raise_on_entire_batch_failure = False


def record_handler(record: SQSRecord) -> None:
    job = parse_job(record.body)  # a poison body fails here, then the DLQ
    # A redelivery may follow a run that wrote memories but failed to index them: heal that too.
    redelivered = int(record.attributes.approximate_receive_count) > 1
    jobs.run(wiring.engine(), job, redelivered=redelivered)
    logger().info("job done", extra={"kind": job.kind, "group": job.group_id()})


@logger().inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    count_jobs(event, dict(response))
    return dict(response)


def count_jobs(event: dict[str, Any], response: dict[str, Any]) -> None:
    """One `Jobs` metric per record, by kind: done, or failed (delivered again, parked at last)."""
    failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
    for record in event.get("Records", []):
        outcome = "failed" if record.get("messageId") in failed else "done"
        record_job(_kind(record.get("body", "")), outcome)


def _kind(body: str) -> str:
    try:
        return parse_job(body).kind
    except ValueError:  # not a job (JSON or validation error): the DLQ will hold it
        return "unreadable"
