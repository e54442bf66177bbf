"""A secret read at run time from Secrets Manager (Powertools `parameters`), cached for a while.

The LLM key never sits in a function's environment, where anyone allowed
`lambda:GetFunctionConfiguration` could read it: the function is told the secret's name
(`MEMORY_ENGINE_OPENAI_API_KEY_SECRET`) and its role may read that secret alone. The value is
fetched on first use and again after `max_age_s`, so a rotated key is picked up within that time
by every warm function.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from memory_engine.adapters.aws import clients

_lock = threading.Lock()
# region → (the client the provider was made with, the provider): a client forgotten by
# `clients.forget_clients` (tests swapping credentials) gets a fresh provider and an empty cache.
_providers: dict[str | None, tuple[Any, Any]] = {}


def _provider(region: str | None) -> Any:
    from aws_lambda_powertools.utilities.parameters import SecretsProvider

    client = clients.client("secretsmanager", region)
    with _lock:
        held = _providers.get(region)
        if held is None or held[0] is not client:
            held = (client, SecretsProvider(boto3_client=client))
            _providers[region] = held
        return held[1]


def read_secret(secret_id: str, *, region: str | None, max_age_s: int, what: str) -> str:
    """The secret's string value; Unavailable (naming `what`, never the secret) when it cannot be read."""
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

    try:
        value = _provider(region).get(secret_id, max_age=max_age_s)
    except GetParameterError as failed:
        raise clients.unavailable(
            f"{what} could not be read from Secrets Manager; check that the secret exists and that "
            "this function's role may read it (secretsmanager:GetSecretValue).",
            secret_id,
            failed,
        ) from failed
    if not isinstance(value, str) or not value.strip():
        raise clients.unavailable(
            f"{what} in Secrets Manager is empty or not a string: store the key itself as the "
            "secret's string.",
            secret_id,
            "empty or binary secret",
        )
    return value.strip()


def secret_reader(secret_id: str, *, region: str | None, max_age_s: int, what: str) -> Callable[[], str]:
    """A function that reads the secret each time it is called (from the cache while fresh)."""
    return lambda: read_secret(secret_id, region=region, max_age_s=max_age_s, what=what)
