"""`Queue` on SQS FIFO: message group = tenant + session, so one extraction at a time per session.

Deduplication is explicit, one fresh id per `send` call: botocore's retries of that call reuse the
id, so a send is never doubled by the transport, but two sends are two messages. Content-based
deduplication would be wrong here: SQS drops a message whose content was sent in the last five
minutes *even if the first was already processed*, and consolidate queues a job only when the
buffer crosses the threshold, so a dropped job could leave a full buffer waiting for good. A
redundant job costs one extraction run that finds nothing to do (extraction is idempotent).

The Lambda event source mapping is the consumer on AWS. `receive`/`ack`/`release`, `dead_jobs`
and `pending_count` are the same consumer side the local worker has, for tests and operations.
"""

from __future__ import annotations

import hashlib
import math
import re
import uuid
from typing import Any

from memory_engine.adapters.aws.clients import aws_errors, client
from memory_engine.models.messages import Job, parse_job
from memory_engine.ports import QueueSnapshot, ReceivedJob

# SQS message group ids: at most 128 characters from this set.
_GROUP_SAFE = re.compile(r"^[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}$")


def message_group(job: Job) -> str:
    """The job's FIFO group: readable when SQS accepts it as is, else a digest of it."""
    group = job.group_id()
    if _GROUP_SAFE.match(group):
        return group
    return "sha256:" + hashlib.sha256(group.encode()).hexdigest()


class SqsQueue:
    """Producer side of the extraction queue (plus a polling consumer side for tests and ops)."""

    def __init__(self, queue_url: str, region: str | None = None, sqs: Any = None) -> None:
        self.queue_url = queue_url
        self._region = region
        self._client = sqs
        self._dead_letter_url: str | None = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = client("sqs", self._region)
        return self._client

    def _errors(self) -> Any:
        return aws_errors(
            "The SQS queue", "Create it or fix MEMORY_ENGINE_QUEUE_URL.", resource=self.queue_url
        )

    def send(self, job: Job) -> None:
        with self._errors():
            self.client.send_message(
                QueueUrl=self.queue_url,
                MessageBody=job.model_dump_json(),
                MessageGroupId=message_group(job),
                MessageDeduplicationId=uuid.uuid4().hex,
            )

    # -- the consumer side -----------------------------------------------------------------------

    def receive(self, max_messages: int = 1, visibility_seconds: float = 30) -> list[ReceivedJob]:
        """Up to `max_messages` jobs, the oldest waiting one of distinct sessions.

        One message per call: SQS may hand out several of one group in a single receive, and a
        message received is in flight; asking one at a time keeps at most one per session in hand.
        """
        received: list[ReceivedJob] = []
        for _ in range(max(0, max_messages)):
            messages = self._receive(self.queue_url, 1, visibility_seconds)
            if not messages:
                break
            received.append(_received(messages[0]))
        return received

    def ack(self, receipt: str) -> bool:
        with self._errors():
            self.client.delete_message(QueueUrl=self.queue_url, ReceiptHandle=receipt)
        return True

    def release(self, receipt: str, error: str | None = None) -> bool:
        """Visible again now; the receive still counts towards the redrive to the dead-letter queue.
        `error` cannot be kept: an SQS message is immutable (the worker's log has the reason)."""
        with self._errors():
            self.client.change_message_visibility(
                QueueUrl=self.queue_url, ReceiptHandle=receipt, VisibilityTimeout=0
            )
        return True

    def pending_count(self) -> int:
        """Messages waiting or in flight (SQS counts approximately; exactly under moto)."""
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        with self._errors():
            attributes = self.client.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=names)
        return sum(int(attributes["Attributes"].get(name, 0)) for name in names)

    def snapshot(self, tenant: str) -> QueueSnapshot:
        """Nothing listed: only the worker may receive from the queues (and a receive would count
        towards a job's dead-lettering). Operators read dead letters with `dead_jobs`."""
        return QueueSnapshot(pending=None, dead=None)

    def dead_jobs(self) -> list[Job]:
        """The jobs parked in the dead-letter queue, oldest first (read, then made visible again)."""
        url = self._dead_letter_queue_url()
        if url is None:
            return []
        seen: list[dict[str, Any]] = []
        while True:
            messages = self._receive(url, 10, 5)
            if not messages:
                break
            seen.extend(messages)
        with self._errors():
            for message in seen:
                self.client.change_message_visibility(
                    QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
                )
        return [parse_job(message["Body"]) for message in seen]

    def _receive(self, url: str, count: int, visibility_seconds: float) -> list[dict[str, Any]]:
        with self._errors():
            response = self.client.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=count,
                VisibilityTimeout=max(0, math.ceil(visibility_seconds)),
                WaitTimeSeconds=0,
                MessageSystemAttributeNames=["ApproximateReceiveCount", "MessageGroupId"],
            )
        messages: list[dict[str, Any]] = response.get("Messages", [])
        return messages

    def _dead_letter_queue_url(self) -> str | None:
        if self._dead_letter_url is None:
            import json

            with self._errors():
                attributes = self.client.get_queue_attributes(
                    QueueUrl=self.queue_url, AttributeNames=["RedrivePolicy"]
                )
            policy = attributes.get("Attributes", {}).get("RedrivePolicy")
            if not policy:
                return None
            name = json.loads(policy)["deadLetterTargetArn"].rsplit(":", 1)[-1]
            with self._errors():
                self._dead_letter_url = self.client.get_queue_url(QueueName=name)["QueueUrl"]
        return self._dead_letter_url


def _received(message: dict[str, Any]) -> ReceivedJob:
    return ReceivedJob(
        receipt=message["ReceiptHandle"],
        job=parse_job(message["Body"]),
        receive_count=int(message.get("Attributes", {}).get("ApproximateReceiveCount", 1)),
    )
