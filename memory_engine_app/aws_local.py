"""The API on the AWS backend with no AWS account: moto in server mode stands in for DynamoDB and
SQS, and the local server serves the very same handlers against it over real HTTP.

    python -m memory_engine_app.aws_local        (make run-aws-local; PORT, MOTO_PORT to change)

It starts moto on 127.0.0.1:MOTO_PORT (default 5000), creates the table and the FIFO queue with its
dead-letter queue there, points boto3 at it (AWS_ENDPOINT_URL, dummy credentials), sets
MEMORY_ENGINE_BACKEND=aws, issues an API key of tenant `local` in the DynamoDB key table, and runs
the local server (its in-process worker drains the SQS queue). The search index stays the
in-memory one, rebuilt from DynamoDB at start: moto has no OpenSearch. Data lives as long as the
process: moto keeps it in memory. Drive it with curl as in the README, or inspect moto's state
with the AWS CLI (`aws --endpoint-url http://127.0.0.1:5000 dynamodb scan --table-name
memory-engine`).
"""

from __future__ import annotations

import json
import logging
import os
import sys

TABLE = "memory-engine"
QUEUE = "memory-engine-extraction.fifo"
REGION = "us-east-1"
TENANT = "local"


def aws_environment(moto_url: str) -> dict[str, str]:
    """What boto3 and the engine read to work against moto (credentials are moto's dummies)."""
    return {
        "AWS_ENDPOINT_URL": moto_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "MEMORY_ENGINE_BACKEND": "aws",
        "MEMORY_ENGINE_TABLE_NAME": TABLE,
    }


def create_resources() -> str:
    """The table (with its TTL) and the FIFO extraction queue with its FIFO dead-letter queue, as
    the CDK app makes them; returns the queue URL."""
    from memory_engine.adapters.aws import clients
    from memory_engine.adapters.aws.dynamodb_keys import TTL_ATTRIBUTE, create_table_request

    dynamodb = clients.client("dynamodb", REGION)
    dynamodb.create_table(**create_table_request(TABLE))
    dynamodb.update_time_to_live(
        TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
    )
    sqs = clients.client("sqs", REGION)
    dead = sqs.create_queue(QueueName=QUEUE.replace(".fifo", "-dlq.fifo"), Attributes={"FifoQueue": "true"})
    dead_arn = sqs.get_queue_attributes(QueueUrl=dead["QueueUrl"], AttributeNames=["QueueArn"])
    redrive = {"deadLetterTargetArn": dead_arn["Attributes"]["QueueArn"], "maxReceiveCount": "5"}
    queue = sqs.create_queue(
        QueueName=QUEUE,
        Attributes={"FifoQueue": "true", "VisibilityTimeout": "30", "RedrivePolicy": json.dumps(redrive)},
    )
    url: str = queue["QueueUrl"]
    return url


def issue_key() -> str:
    """An API key of tenant `local` in the DynamoDB key table (no usage plan: moto has no stage)."""
    from memory_engine.adapters.local.usage_plan import NoUsagePlan
    from memory_engine.composition import key_wiring
    from memory_engine.ports.clock import SystemClock
    from memory_engine.usecases import keys

    return keys.create(
        key_wiring.key_store(), SystemClock().now(), TENANT, "aws-local", usage=NoUsagePlan()
    ).key


def main() -> int:
    from moto.server import ThreadedMotoServer

    from memory_engine.settings import reset_settings
    from memory_engine_app.server.app import serve

    # moto logs every request, and the worker polls the queue several times a second.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    moto_port = int(os.environ.get("MOTO_PORT", "5000"))
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=moto_port)
    moto.start()
    try:
        os.environ.update(aws_environment(f"http://127.0.0.1:{moto_port}"))
        os.environ["MEMORY_ENGINE_QUEUE_URL"] = create_resources()
        # The server's own key is the DynamoDB one just issued: printed here, once, as the server
        # prints a key it generates (it never prints a MEMORY_ENGINE_API_KEY it is given).
        key = issue_key()
        os.environ["MEMORY_ENGINE_API_KEY"] = key
        reset_settings()
        print(f"moto (DynamoDB, SQS) on http://127.0.0.1:{moto_port}", flush=True)
        print(f"API key (new, issued for tenant {TENANT} in the DynamoDB key table): {key}", flush=True)
        serve()
    finally:
        moto.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
