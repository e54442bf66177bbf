"""A stand-in for Lambda's SQS event source mapping: poll a (moto) queue, invoke a handler with the
batch as an SQS event, delete what succeeded and make the reported failures visible again."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from memory_engine.adapters.aws import clients
from memory_engine_app.server.apigw import LocalContext

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def sqs_event(messages: list[dict[str, Any]], queue_arn: str) -> dict[str, Any]:
    """The event Lambda builds for a batch of received SQS messages."""
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": message.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": hashlib.md5(message["Body"].encode()).hexdigest(),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": queue_arn.split(":")[3],
            }
            for message in messages
        ]
    }


class EventSourceMapping:
    """Delivers a queue's messages to `handler` as Lambda would, one batch per `poll`."""

    def __init__(
        self,
        queue_url: str,
        handler: Handler,
        batch_size: int = 10,
        region: str = "us-east-1",
        visibility_seconds: int = 30,
        failed_visible_at_once: bool = True,
        context: Callable[[], Any] = LocalContext,
    ) -> None:
        self.queue_url = queue_url
        self.handler = handler
        self.batch_size = batch_size
        # How long a received batch stays hidden: a handler that never answers (its function
        # killed) gets it back after this, as Lambda does after the queue's visibility timeout.
        self.visibility_seconds = visibility_seconds
        # Lambda leaves a failed record hidden until its visibility ends (the worker sets it to the
        # retry delay); True makes it visible at once instead, so tests need not wait out delays.
        self.failed_visible_at_once = failed_visible_at_once
        # A fresh Lambda context per invocation (its remaining time counts down from its timeout).
        self.context = context
        self.sqs = clients.client("sqs", region)
        self.queue_arn = self.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        self.responses: list[dict[str, Any]] = []

    def poll(self, deliveries: int = 1) -> bool:
        """One batch; `deliveries` > 1 hands the very same batch to the handler again (SQS delivers
        at least once). Returns False when nothing was waiting."""
        received = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            VisibilityTimeout=self.visibility_seconds,
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        if not received:
            return False
        event = sqs_event(received, self.queue_arn)
        failed: set[str] = set()
        for _ in range(deliveries):
            try:
                response = self.handler(event, self.context())
            except Exception as error:  # Lambda retries the whole batch of a failed invocation
                response = {
                    "error": repr(error),
                    "batchItemFailures": [{"itemIdentifier": m["MessageId"]} for m in received],
                }
            self.responses.append(response)
            failed = {item["itemIdentifier"] for item in response.get("batchItemFailures", [])}
        for message in received:
            if message["MessageId"] in failed:
                if not self.failed_visible_at_once:
                    continue
                self.sqs.change_message_visibility(
                    QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
                )
            else:
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return True

    def drain(self, deliveries: int = 1, max_polls: int = 100) -> int:
        """Poll until the queue has nothing visible; returns the number of batches."""
        polls = 0
        while polls < max_polls and self.poll(deliveries):
            polls += 1
        return polls
