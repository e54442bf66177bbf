"""SQS FIFO → worker: one record is one job (`models.messages.Job`), routed by `usecases.jobs`.
Also the sweep: a scheduled EventBridge rule invokes this function with `{"sweep": true}`.

Not an HTTP route: the CDK app wires it to the queue (functions/routes.py lists it in WORKERS).
A job that fails is retried after a backoff: the worker sets the message's visibility to the
delay (`usecases.jobs.RetryPolicy`) and reports the record failed, so the queue delivers it again
then. After its last attempt the worker sends it to the dead-letter queue with its error and
reports it done. A body that is not a job fails every time and the queue's redrive policy parks it.
`SqsFifoPartialProcessor` (a Powertools `BatchProcessor` for `EventType.SQS`) keeps FIFO order:
once a record fails, the later records of the same session are reported failed too, unprocessed,
while other sessions in the batch go on. Processing is idempotent (the store claims turns with
conditions), so a record delivered twice, or retried after a crash, writes one memory. A job that
would not finish inside the function's timeout takes the batches that fit and queues the rest
(`extraction/budget.py`), rather than being killed and retried until it is dead-lettered.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from memory_engine import deadline
from memory_engine.composition import wiring
from memory_engine.edge.logsafe import logger
from memory_engine.edge.observability import record_jobs
from memory_engine.errors import Unavailable
from memory_engine.models.messages import parse_job
from memory_engine.models.queue import ReceivedJob
from memory_engine.ports import JobSource
from memory_engine.usecases import jobs, sweep

processor = SqsFifoPartialProcessor(skip_group_on_error=True)
# A batch whose every record failed is answered like any other (all ids in batchItemFailures) rather
# than raised: the outcome for the queue is the same, and the response says which records they were.
processor.raise_on_entire_batch_failure = False


class RetryLater(Exception):
    """Reports a record failed after its retry delay was set on the message."""


def _source() -> JobSource | None:
    try:
        return wiring.job_source()
    except Unavailable:  # an engine whose queue cannot settle jobs (tests with a list queue)
        return None


def record_handler(record: SQSRecord) -> None:
    job = parse_job(record.body)  # a poison body fails here every time, then the redrive parks it
    engine = wiring.engine()
    # A redelivery may follow a run that wrote memories but failed to index them: heal that too.
    message = ReceivedJob(
        receipt=record.receipt_handle,
        job=job,
        receive_count=int(record.attributes.approximate_receive_count),
    )
    outcome = jobs.attempt(engine, _source(), message, jobs.RetryPolicy.of(engine.limits))
    if outcome == "retry":
        raise RetryLater(f"job of {job.group_id()} retried after its backoff")
    logger().info(f"job {outcome}", extra={"kind": job.kind, "group": job.group_id()})


@logger().inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if event.get("sweep") is True:
        queued = sweep.run(wiring.engine())
        logger().info("sweep done", extra={"queued": len(queued)})
        return {"queued": len(queued)}
    # Under the invocation's deadline: an extraction job leaves what would not fit in the time
    # left to a job of its own (extraction/budget.py) rather than being killed and retried.
    with deadline.within(deadline.of_context(context)):
        response = process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )
    record_jobs(event, dict(response))
    return dict(response)
