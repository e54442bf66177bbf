"""API keys from configuration: the key store, the key → tenant resolver and the usage plan.

Built once per process from `KeySettings` alone and without an engine, so that the Lambda
authorizer needs no queue or index configured and loads no model, nor even the engine's modules;
the local server and the CLI share them.
"""

from __future__ import annotations

from functools import lru_cache

from memory_engine.composition.backends import backend
from memory_engine.composition.providers import KEY_STORES, USAGE_PLANS
from memory_engine.edge.auth import AnyKey, KeyResolver, SingleKey, StoreKeys, local_api_key
from memory_engine.ports import KeyStore, UsagePlanKeys
from memory_engine.ports.clock import SystemClock
from memory_engine.settings import KeySettings, loaded


@lru_cache(maxsize=1)
def key_store() -> KeyStore:
    """Where API keys live: a table of the local database (DynamoDB with the AWS backend)."""
    return build_key_store(loaded(KeySettings))


def build_key_store(settings: KeySettings) -> KeyStore:
    return KEY_STORES.create(settings.backend, settings)


@lru_cache(maxsize=1)
def key_resolver() -> KeyResolver:
    """API key → tenant, for the local server and the Lambda REQUEST authorizer alike.

    Keys from the key store always; with the local backend also the single local key
    (MEMORY_ENGINE_API_KEY, or the one generated into the data dir), for tenant `local`.
    Builds no engine: an authorizer loads no model and no index.
    """
    settings = loaded(KeySettings)
    resolvers: list[KeyResolver] = [StoreKeys(key_store(), SystemClock().now)]
    if backend(settings).single_local_key:
        resolvers.insert(0, SingleKey(local_api_key(settings.api_key, settings.data_dir)[0]))
    return AnyKey(resolvers)


@lru_cache(maxsize=1)
def usage_plan_keys() -> UsagePlanKeys:
    """Where each API key gets its per-key rate limit: the API Gateway usage plan on AWS
    (MEMORY_ENGINE_USAGE_PLAN_ID; without it, issuing a key is refused), nothing locally."""
    return build_usage_plan_keys(loaded(KeySettings))


def build_usage_plan_keys(settings: KeySettings) -> UsagePlanKeys:
    return USAGE_PLANS.create(settings.backend, settings)


def reset() -> None:
    """Forget the built key adapters (tests that change settings between cases)."""
    key_store.cache_clear()
    key_resolver.cache_clear()
    usage_plan_keys.cache_clear()
