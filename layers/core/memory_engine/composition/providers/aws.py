"""Builders of the AWS backend's adapters: DynamoDB, SQS FIFO, the API Gateway usage plan."""

from __future__ import annotations

from memory_engine.adapters.aws.apigateway_usage_plan import ApiGatewayUsagePlanKeys, MissingUsagePlan
from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.adapters.aws.sqs_queue import SqsQueue
from memory_engine.ports import UsagePlanKeys
from memory_engine.settings import KeySettings, QueueSettings, StorageSettings


def dynamodb_store(settings: StorageSettings) -> DynamoDbStore:
    return DynamoDbStore(settings.table_name or "", settings.aws_region)


def sqs_queue(settings: QueueSettings) -> SqsQueue:
    return SqsQueue(settings.queue_url or "", settings.aws_region, dead_letter_url=settings.dead_letter_url)


def dynamodb_keys(settings: KeySettings) -> DynamoDbKeyStore:
    return DynamoDbKeyStore(settings.table_name or "", settings.aws_region)


def apigateway_usage_plan(settings: KeySettings) -> UsagePlanKeys:
    # Without MEMORY_ENGINE_USAGE_PLAN_ID, issuing a key is refused rather than left unlimited.
    if not settings.usage_plan_id:
        return MissingUsagePlan()
    return ApiGatewayUsagePlanKeys(settings.usage_plan_id, settings.aws_region)
