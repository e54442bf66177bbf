"""Alarms that say a turn may be stuck or the API is failing, and one dashboard for the service.

Alarms go to an SNS topic; `-c alarmEmail=<address>` subscribes an address to it. CloudWatch can
publish there only if both policies let it: the topic is encrypted with a key of its own whose
policy lets CloudWatch use it (AWS's managed `alias/aws/sns` key lets no service do so), and the
topic's policy allows CloudWatch alarms of this account to publish.
- dead letters: any message in a worker's DLQ (an extraction failed every retry; redrive it)
- backlog: a worker's oldest message older than 15 minutes (the worker is stuck or throttled)
- worker errors: any failed worker invocation
- API 5xx: 5 or more in 5 minutes; API latency: p99 over 3 s for 15 minutes
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Aws, Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from infra.config import StackConfig
from infra.worker import Worker

FIVE_MINUTES = Duration.minutes(5)
BACKLOG_SECONDS = 15 * 60
API_5XX_PER_5_MINUTES = 5
API_P99_MS = 3000


class Monitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        api: apigw.RestApi,
        workers: Mapping[str, tuple[Worker, lambda_.IFunction]],
        functions: Mapping[str, lambda_.IFunction],
    ) -> None:
        super().__init__(scope, construct_id)
        self.topic = self._topic(config)
        if config.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))
        self.alarms: list[cloudwatch.Alarm] = []
        for name, (worker, function) in workers.items():
            self._alarm(
                f"{name}DeadLetters",
                worker.dead_letters.metric_approximate_number_of_messages_visible(
                    period=Duration.minutes(1), statistic="Maximum"
                ),
                threshold=1,
                description=f"{name}: a job failed every retry and is parked in the dead-letter queue.",
            )
            self._alarm(
                f"{name}Backlog",
                worker.queue.metric_approximate_age_of_oldest_message(
                    period=FIVE_MINUTES, statistic="Maximum"
                ),
                threshold=BACKLOG_SECONDS,
                periods=3,
                description=f"{name}: the oldest job has waited over 15 minutes.",
            )
            self._alarm(
                f"{name}Errors",
                function.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"{name}: invocations failed (the jobs are retried, then dead-lettered).",
            )
        self._alarm(
            "Api5xx",
            api.metric_server_error(period=FIVE_MINUTES, statistic="Sum"),
            threshold=API_5XX_PER_5_MINUTES,
            description="API: 5xx answers.",
        )
        self._alarm(
            "ApiLatencyP99",
            api.metric_latency(period=FIVE_MINUTES, statistic="p99"),
            threshold=API_P99_MS,
            periods=3,
            description="API: p99 latency over 3 s for 15 minutes.",
        )
        self.dashboard = self._dashboard(config, api, workers, functions)

    def _topic(self, config: StackConfig) -> sns.Topic:
        stack = Stack.of(self)
        cloudwatch_service = iam.ServicePrincipal("cloudwatch.amazonaws.com")
        key = kms.Key(
            self,
            "AlarmTopicKey",
            description="memory-engine: encrypts the alarm topic; CloudWatch may use it to publish",
            enable_key_rotation=True,
            removal_policy=RemovalPolicy.RETAIN if config.protect_data else RemovalPolicy.DESTROY,
        )
        # What CloudWatch needs to publish to a topic encrypted with a customer-managed key.
        key.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[cloudwatch_service],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" is this key
            )
        )
        topic = sns.Topic(self, "AlarmTopic", master_key=key, enforce_ssl=True)
        # The topic's own policy (enforce_ssl makes one, replacing SNS's default) lets this
        # account's alarms publish, and no one else's (confused deputy).
        topic.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[cloudwatch_service],
                actions=["sns:Publish"],
                resources=[topic.topic_arn],
                conditions={
                    "ArnLike": {"aws:SourceArn": stack.format_arn(service="cloudwatch", resource="alarm:*")},
                    "StringEquals": {"aws:SourceAccount": stack.account},
                },
            )
        )
        return topic

    def _alarm(
        self,
        alarm_id: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        periods: int = 1,
    ) -> None:
        alarm = cloudwatch.Alarm(
            self,
            alarm_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms.append(alarm)

    def _dashboard(
        self,
        config: StackConfig,
        api: apigw.RestApi,
        workers: Mapping[str, tuple[Worker, lambda_.IFunction]],
        functions: Mapping[str, lambda_.IFunction],
    ) -> cloudwatch.Dashboard:
        # Dashboards are global to an account: the region in the name lets one stage be deployed
        # in two regions of an account.
        dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=dashboard_name(config))
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="API requests and errors",
                left=[api.metric_count(), api.metric_client_error(), api.metric_server_error()],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="API latency (p50, p99)",
                left=[api.metric_latency(statistic="p50"), api.metric_latency(statistic="p99")],
                width=12,
            ),
        )
        for name, (worker, function) in workers.items():
            dashboard.add_widgets(
                cloudwatch.GraphWidget(
                    title=f"{name}: queue",
                    left=[
                        worker.queue.metric_approximate_number_of_messages_visible(),
                        worker.dead_letters.metric_approximate_number_of_messages_visible(),
                    ],
                    right=[worker.queue.metric_approximate_age_of_oldest_message()],
                    width=12,
                ),
                cloudwatch.GraphWidget(
                    title=f"{name}: invocations",
                    left=[function.metric_invocations(), function.metric_errors()],
                    right=[function.metric_duration(statistic="p99")],
                    width=12,
                ),
            )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Function errors",
                left=[fn.metric_errors(label=name) for name, fn in functions.items()],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Function duration p99",
                left=[fn.metric_duration(statistic="p99", label=name) for name, fn in functions.items()],
                width=12,
            ),
        )
        return dashboard


def dashboard_name(config: StackConfig) -> str:
    """`MemoryEngine-<stage>-<region>`: unique in the account (dashboards are not regional)."""
    return f"{config.stack_name}-{Aws.REGION}"
