"""`UsagePlanKeys` on API Gateway: one API key per memory-engine key, in the stage's usage plan.

The REST API takes its API keys from the authorizer (`apiKeySource: AUTHORIZER`): the authorizer
answers a valid memory-engine key with `usageIdentifierKey = auth.usage_key_value(key_id)`, and API
Gateway throttles (and counts the quota of) the usage-plan key with that value. A key that passed
the authorizer but has no usage-plan key gets API Gateway's 403 (INVALID_API_KEY).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from memory_engine.adapters.aws.clients import aws_errors, client, error_code
from memory_engine.edge.auth import key_id_of_usage_key, usage_key_name, usage_key_value
from memory_engine.errors import Conflict, Unavailable

log = logging.getLogger("memory_engine.usage_plan")

MISSING_PLAN = (
    "MEMORY_ENGINE_USAGE_PLAN_ID is not set: with the AWS backend every key needs an API Gateway "
    "usage-plan key, or API Gateway answers its requests with 403. Set it to the stack's "
    "UsagePlanId output."
)


class ApiGatewayUsagePlanKeys:
    """The `UsagePlanKeys` port over API Gateway's API keys and usage-plan keys."""

    def __init__(self, usage_plan_id: str, region: str | None = None, apigateway: Any = None) -> None:
        self._plan = usage_plan_id
        self._region = region
        self._client = apigateway

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = client("apigateway", self._region)  # boto3 loads on first use only
        return self._client

    def add(self, key_id: str) -> None:
        with self._errors():
            try:
                created = self.client.create_api_key(
                    name=usage_key_name(key_id),
                    value=usage_key_value(key_id),
                    enabled=True,
                    description=f"memory-engine key {key_id}: its rate limits (no caller sends this value)",
                )
            except self.client.exceptions.ConflictException as error:
                raise Conflict(f"Key id {key_id} already has a usage-plan API key.") from error
            try:
                self.client.create_usage_plan_key(
                    usagePlanId=self._plan, keyId=created["id"], keyType="API_KEY"
                )
            except BaseException:
                self._take_back(created["id"], key_id)
                raise

    def remove(self, key_id: str) -> bool:
        with self._errors():
            in_plan = self._ids("get_usage_plan_keys", key_id, usagePlanId=self._plan)
            found = self._ids("get_api_keys", key_id, includeValues=True)
            # Out of the plan first, then the key (deleting the key alone also drops it from the plan).
            for api_key_id in in_plan:
                self._ignore_missing(
                    self.client.delete_usage_plan_key, usagePlanId=self._plan, keyId=api_key_id
                )
            for api_key_id in found:
                self._ignore_missing(self.client.delete_api_key, apiKey=api_key_id)
            return bool(in_plan or found)

    def key_ids(self) -> set[str]:
        found: set[str] = set()
        with self._errors():
            pages = self.client.get_paginator("get_usage_plan_keys").paginate(usagePlanId=self._plan)
            for page in pages:
                for item in page.get("items", []):
                    key_id = key_id_of_usage_key(item.get("value", ""))
                    if key_id is not None:
                        found.add(key_id)
        return found

    def _ids(self, operation: str, key_id: str, **arguments: Any) -> list[str]:
        """Ids of the API keys (or plan keys) holding the key id's value: one at most, since API
        Gateway keeps values unique."""
        value = usage_key_value(key_id)
        pages = self.client.get_paginator(operation).paginate(nameQuery=usage_key_name(key_id), **arguments)
        return [item["id"] for page in pages for item in page.get("items", []) if item.get("value") == value]

    def _take_back(self, api_key_id: str, key_id: str) -> None:
        """Delete an API key that never joined the plan; a failure here must not hide the first."""
        try:
            self._ignore_missing(self.client.delete_api_key, apiKey=api_key_id)
        except Exception:
            log.warning(
                "API key %s of key id %s is left outside the usage plan (harmless: API Gateway "
                "accepts only keys in the plan); delete it in the console if you like.",
                api_key_id,
                key_id,
            )

    def _ignore_missing(self, call: Any, **arguments: Any) -> None:
        with suppress(self.client.exceptions.NotFoundException):  # gone already: what was wanted
            call(**arguments)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        from botocore.exceptions import ClientError

        try:
            with aws_errors(f"API Gateway usage plan {self._plan}"):
                yield
        except ClientError as error:
            if error_code(error) == "NotFoundException":
                raise Unavailable(
                    f"API Gateway usage plan {self._plan} does not exist: set MEMORY_ENGINE_USAGE_PLAN_ID "
                    "to the stack's UsagePlanId output."
                ) from error
            raise


class MissingUsagePlan:
    """The AWS backend without MEMORY_ENGINE_USAGE_PLAN_ID: refuses to issue keys that API Gateway
    would refuse, and lets a revocation through (the key store's revocation is what counts)."""

    def add(self, key_id: str) -> None:
        raise Unavailable(MISSING_PLAN)

    def remove(self, key_id: str) -> bool:
        log.warning(
            "%s The usage-plan key of %s was left; `memory-engine keys sync` removes it.",
            MISSING_PLAN,
            key_id,
        )
        return False

    def key_ids(self) -> set[str]:
        raise Unavailable(MISSING_PLAN)
