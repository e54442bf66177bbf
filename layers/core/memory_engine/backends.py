"""The backends by name (MEMORY_ENGINE_BACKEND), each a set of factories for its adapters.

One adapter per provider, chosen through this one lazy map: a factory imports its adapter's
module (and the SDK behind it) only when it is called, so choosing `local` never loads boto3.
`wiring` builds through it and the CLI asks it where the durable search index lives; adding a
backend is one entry in `BACKENDS` (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_engine.ports import KeyStore, Queue, Store, UsagePlanKeys
    from memory_engine.settings import Settings


@dataclass(frozen=True)
class Backend:
    """What a backend provides: its adapters, each built from the settings on demand."""

    store: Callable[[Settings], Store]
    queue: Callable[[Settings], Queue]
    key_store: Callable[[Settings], KeyStore]
    usage_plan_keys: Callable[[Settings], UsagePlanKeys]
    # The one local API key (MEMORY_ENGINE_API_KEY or the generated one) is accepted too.
    single_local_key: bool
    # Without OpenSearch, the in-process index is persisted beside this backend's database; where
    # it is not, only OpenSearch outlives the process, so that is what `reindex` rebuilds.
    index_files: bool


def database_path(settings: Settings) -> str:
    """The local backend's single SQLite file, in the data folder (created when missing)."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return str(settings.data_dir / "memory-engine.sqlite3")


# -- local: one SQLite file, no usage plan --------------------------------------------------------


def _sqlite_store(settings: Settings) -> Store:
    from memory_engine.adapters.local.sqlite_store import SqliteStore

    return SqliteStore(database_path(settings))


def _sqlite_queue(settings: Settings) -> Queue:
    from memory_engine.adapters.local.sqlite_queue import SqliteQueue

    return SqliteQueue(database_path(settings), max_receives=settings.worker_max_receives)


def _sqlite_keys(settings: Settings) -> KeyStore:
    from memory_engine.adapters.local.sqlite_keys import SqliteKeyStore

    return SqliteKeyStore(database_path(settings))


def _no_usage_plan(settings: Settings) -> UsagePlanKeys:
    from memory_engine.adapters.local.usage_plan import NoUsagePlan

    return NoUsagePlan()


# -- aws: DynamoDB, SQS FIFO, the API Gateway usage plan -----------------------------------------


def _dynamodb_store(settings: Settings) -> Store:
    from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore

    return DynamoDbStore(settings.table_name or "", settings.aws_region)


def _sqs_queue(settings: Settings) -> Queue:
    from memory_engine.adapters.aws.sqs_queue import SqsQueue

    return SqsQueue(settings.queue_url or "", settings.aws_region, dead_letter_url=settings.dead_letter_url)


def _dynamodb_keys(settings: Settings) -> KeyStore:
    from memory_engine.adapters.aws.dynamodb_api_keys import DynamoDbKeyStore

    return DynamoDbKeyStore(settings.table_name or "", settings.aws_region)


def _apigateway_usage_plan(settings: Settings) -> UsagePlanKeys:
    # Without MEMORY_ENGINE_USAGE_PLAN_ID, issuing a key is refused rather than left unlimited.
    from memory_engine.adapters.aws.apigateway_usage_plan import ApiGatewayUsagePlanKeys, MissingUsagePlan

    if not settings.usage_plan_id:
        return MissingUsagePlan()
    return ApiGatewayUsagePlanKeys(settings.usage_plan_id, settings.aws_region)


BACKENDS: dict[str, Backend] = {
    "local": Backend(
        store=_sqlite_store,
        queue=_sqlite_queue,
        key_store=_sqlite_keys,
        usage_plan_keys=_no_usage_plan,
        single_local_key=True,
        index_files=True,
    ),
    "aws": Backend(
        store=_dynamodb_store,
        queue=_sqs_queue,
        key_store=_dynamodb_keys,
        usage_plan_keys=_apigateway_usage_plan,
        single_local_key=False,
        index_files=False,
    ),
}


def backend(settings: Settings) -> Backend:
    """The configured backend's entry in `BACKENDS` (the settings allow only its names)."""
    return BACKENDS[settings.backend]
