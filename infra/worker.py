"""A worker's SQS FIFO queue, its FIFO dead-letter queue, the event source that feeds it, and the
scheduled sweep that invokes it.

Order and one-at-a-time per session come from the queue, not from the function: every job of a
session shares one message group (`ExtractionJob.group_id`), and Lambda hands a FIFO group's next
message over only once the previous one is done. Concurrency across sessions is capped so the
table, the index and the LLM endpoint see a bounded load.

The worker parks a job that failed its last attempt in the dead-letter queue itself (with the
error as a message attribute), so it may send there. Every `sweep_minutes` an EventBridge rule
invokes it with `{"sweep": true}`: it queues a job for every session whose buffer holds a full
batch (one whose job died, or was lost), see `memory_engine.usecases.sweep`.
"""

from __future__ import annotations

from aws_cdk import Duration, Names, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.config import StackConfig

BATCH_SIZE = 1  # one job per invocation: a failure retries that job alone, and timeouts stay bounded
# AWS asks for a visibility timeout of at least six times the function's timeout: the event source
# keeps a message it could not hand over (the function throttled) invisible meanwhile, and a
# shorter one lets each throttled try burn a receive until the job is dead-lettered unrun.
VISIBILITY_PER_TIMEOUT = 6
# The worker's actions on its queue (see `Worker.consume`): no sqs:GetQueueUrl, which nothing calls.
CONSUME_ACTIONS = (
    "sqs:ReceiveMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
)


class Worker(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        removal = RemovalPolicy.RETAIN if config.protect_data else RemovalPolicy.DESTROY
        self.dead_letters = sqs.Queue(
            self,
            "DeadLetters",
            fifo=True,
            retention_period=Duration.days(14),  # the most SQS keeps: time to look and redrive
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            removal_policy=removal,
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            fifo=True,
            # The sender may set its own deduplication id; content-based is the fallback.
            content_based_deduplication=True,
            visibility_timeout=Duration.seconds(VISIBILITY_PER_TIMEOUT * config.worker_timeout_seconds),
            retention_period=Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letters, max_receive_count=config.max_receive_count
            ),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            removal_policy=removal,
        )

    def consume(self, function: lambda_.Function) -> None:
        """Feed the queue to the function, reporting failures per message (the rest are deleted)."""
        # The mapping CDK's SqsEventSource makes (under its construct id, so a deployed mapping is
        # kept, not replaced), without its grant: `grantConsumeMessages` adds sqs:GetQueueUrl,
        # which the worker never calls (it is told the queues' URLs) and Lambda's poller does not
        # need (it is given the queue's ARN; AWS's AWSLambdaSQSQueueExecutionRole lacks it).
        function.add_event_source_mapping(
            f"SqsEventSource:{Names.node_unique_id(self.queue.node)}",
            event_source_arn=self.queue.queue_arn,
            batch_size=BATCH_SIZE,
            report_batch_item_failures=True,
            max_concurrency=self._config.worker_concurrency,
        )
        # What Lambda's poller does with the function's role (receive, delete, read the queue's
        # attributes: that managed policy's actions), and the worker's own visibility changes (a
        # retry's backoff, a running job's lease). The queue is SQS-managed encrypted: no key to
        # grant.
        function.add_to_role_policy(
            iam.PolicyStatement(actions=list(CONSUME_ACTIONS), resources=[self.queue.queue_arn])
        )
        # SendMessage alone (CDK's grant_send_messages adds the URL and attribute lookups, which
        # the worker never makes: it is told the dead-letter queue's URL).
        _grant_send(self.dead_letters, function)

    def grant_send(self, grantee: iam.IGrantable) -> None:
        """SendMessage to the queue, nothing else (jobs are sent to the URL the function is told)."""
        _grant_send(self.queue, grantee)

    def sweep(self, function: lambda_.Function) -> events.Rule:
        """Invoke the function with the sweep event on a schedule."""
        return events.Rule(
            self,
            "Sweep",
            description="memory-engine: queue extraction for full buffers without a job",
            schedule=events.Schedule.rate(Duration.minutes(self._config.sweep_minutes)),
            targets=[
                targets.LambdaFunction(
                    function,
                    event=events.RuleTargetInput.from_object({"sweep": True}),
                    # A missed sweep is made up by the next one: no retries piling up.
                    retry_attempts=0,
                )
            ],
        )


def _grant_send(queue: sqs.Queue, grantee: iam.IGrantable) -> None:
    grantee.grant_principal.add_to_principal_policy(
        iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[queue.queue_arn])
    )
