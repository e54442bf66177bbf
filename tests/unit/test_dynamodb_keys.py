"""Hashed API keys in the table: created once, resolved by hash, never stored in clear."""

from __future__ import annotations

from typing import Any

import pytest

from memory_engine.adapters.dynamodb_keys import DynamoDbKeyResolver, key_digest, key_id_of
from memory_engine.errors import Unavailable
from tests.fakes.dynamodb import TABLE, dynamodb

__all__ = ["dynamodb"]  # the fixture


@pytest.mark.parametrize(
    ("key", "key_id"),
    [
        ("me_0123abcd_s3cr_et-with_underscores", "0123abcd"),
        ("me_0123abcd_", None),
        ("xx_0123abcd_secret", None),
        ("me__secret", None),
        ("me_not-alnum_secret", None),
        ("plain-token", None),
    ],
)
def test_only_keys_shaped_me_id_secret_have_a_key_id(key: str, key_id: str | None) -> None:
    assert key_id_of(key) == key_id


def test_a_created_key_resolves_to_its_tenant(dynamodb: Any) -> None:
    # Given a key created for tenant acme
    keys = DynamoDbKeyResolver(TABLE, dynamodb)
    key = keys.create_key("acme")
    # When it is resolved / Then it gives acme
    assert keys.tenant_for(key) == "acme"


def test_the_table_keeps_the_keys_hash_not_the_key(dynamodb: Any) -> None:
    keys = DynamoDbKeyResolver(TABLE, dynamodb)
    key = keys.create_key("acme")
    (item,) = dynamodb.scan(TableName=TABLE)["Items"]
    assert item["key_sha256"] == {"S": key_digest(key)}
    assert key not in str(item)
    assert item["pk"] == {"S": f"KEY#{key_id_of(key)}"}


def test_a_key_with_the_right_id_but_another_secret_resolves_to_nobody(dynamodb: Any) -> None:
    keys = DynamoDbKeyResolver(TABLE, dynamodb)
    key = keys.create_key("acme")
    forged = key.rsplit("_", 1)[0] + "_forged"
    assert keys.tenant_for(forged) is None


def test_an_unknown_or_malformed_key_resolves_to_nobody(dynamodb: Any) -> None:
    keys = DynamoDbKeyResolver(TABLE, dynamodb)
    assert keys.tenant_for("me_ffffffffffffffff_whatever") is None
    assert keys.tenant_for("not-a-key") is None


def test_a_disabled_key_resolves_to_nobody(dynamodb: Any) -> None:
    keys = DynamoDbKeyResolver(TABLE, dynamodb)
    key = keys.create_key("acme")
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": f"KEY#{key_id_of(key)}"}, "sk": {"S": "KEY"}},
        UpdateExpression="SET disabled = :yes",
        ExpressionAttributeValues={":yes": {"BOOL": True}},
    )
    assert keys.tenant_for(key) is None


def test_an_unreachable_table_is_unavailable_not_unauthorized(dynamodb: Any) -> None:
    keys = DynamoDbKeyResolver("no-such-table", dynamodb)
    with pytest.raises(Unavailable):
        keys.tenant_for("me_0123abcd_secret")
