"""moto (`mock_aws`) set-ups for the AWS adapters: the engine's table and its FIFO queue with DLQ.

moto serves each call in the calling thread and does not make a transaction atomic against other
threads; DynamoDB does. `moto_aws()` therefore serialises the mocked calls with one lock, so the
concurrency tests exercise the adapters' conditions, not moto's thread safety.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from memory_engine.adapters.aws import clients
from memory_engine.adapters.aws.dynamodb_keys import TTL_ATTRIBUTE, create_table_request

REGION = "us-east-1"
TABLE = "memory-engine"
QUEUE = "memory-engine-extraction.fifo"

_FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}


@contextmanager
def moto_aws() -> Iterator[None]:
    """A fresh moto account for the block, with fake credentials and atomic calls."""
    from moto import mock_aws
    from moto.core.botocore_stubber import BotocoreStubber

    lock = threading.RLock()
    original = BotocoreStubber.process_request

    def one_at_a_time(self: BotocoreStubber, request: Any) -> Any:
        with lock:
            return original(self, request)

    with (
        mock.patch.dict(os.environ, _FAKE_CREDENTIALS),
        mock.patch.object(BotocoreStubber, "process_request", one_at_a_time),
        mock_aws(),
    ):
        clients.forget_clients()
        try:
            yield
        finally:
            clients.forget_clients()


def create_table(name: str = TABLE) -> str:
    dynamodb = clients.client("dynamodb", REGION)
    dynamodb.create_table(**create_table_request(name))
    dynamodb.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
    )
    return name


def create_queue(name: str = QUEUE, max_receives: int = 5) -> str:
    """A FIFO queue whose messages go to a FIFO dead-letter queue after `max_receives` receives."""
    sqs = clients.client("sqs", REGION)
    dead = sqs.create_queue(QueueName=name.replace(".fifo", "-dlq.fifo"), Attributes={"FifoQueue": "true"})
    dead_arn = sqs.get_queue_attributes(QueueUrl=dead["QueueUrl"], AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    redrive = {"deadLetterTargetArn": dead_arn, "maxReceiveCount": str(max_receives)}
    queue = sqs.create_queue(
        QueueName=name,
        Attributes={"FifoQueue": "true", "VisibilityTimeout": "30", "RedrivePolicy": json.dumps(redrive)},
    )
    url: str = queue["QueueUrl"]
    return url
