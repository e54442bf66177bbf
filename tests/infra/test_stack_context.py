"""Stack configuration from CDK context: strings coerced, contradictions refused, stage defaults."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from infra.app import cli_context
from infra.config import ROOT, StackConfig, from_context


def test_context_strings_from_the_command_line_become_typed_values() -> None:
    # Given context as `-c key=value` delivers it (strings)
    context = {"stage": "prod", "maxReceiveCount": "7", "deletionProtection": "false"}
    # When read
    config = from_context(context.get)
    # Then numbers and booleans are typed, and the explicit choice beats the stage default
    assert (config.stage, config.max_receive_count, config.protect_data) == ("prod", 7, False)


def test_unset_context_keeps_the_defaults_that_deploy() -> None:
    config = from_context({}.get)
    assert (config.stage, config.search, config.embedder, config.max_receive_count) == (
        "dev",
        "aoss",
        "lambda",
        5,
    )
    assert config.protect_data is False


def test_prod_protects_data_and_keeps_logs_longer_by_default() -> None:
    config = StackConfig(stage="prod")
    assert config.protect_data is True
    assert config.retention_days == 90


def test_fewer_than_five_receives_before_the_dead_letter_queue_are_refused() -> None:
    # AWS's advice for a queue feeding Lambda: throttled deliveries count as receives too.
    with pytest.raises(ValidationError, match="max_receive_count"):
        from_context({"maxReceiveCount": "3"}.get)


def test_sagemaker_without_an_endpoint_name_is_refused() -> None:
    with pytest.raises(ValidationError, match="sagemakerEndpoint"):
        from_context({"embedder": "sagemaker"}.get)


def test_llm_extraction_without_a_model_is_refused() -> None:
    with pytest.raises(ValidationError, match="llmModel"):
        StackConfig(extractor="llm")


def test_an_unknown_stage_is_refused() -> None:
    with pytest.raises(ValidationError, match="stage"):
        from_context({"stage": "staging"}.get)


def test_key_value_arguments_override_the_context_of_cdk_json(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a run without the CDK CLI (no CDK_CONTEXT_JSON)
    monkeypatch.delenv("CDK_CONTEXT_JSON", raising=False)
    # When arguments are given
    context = cli_context(["stage=prod", "search=es"])
    # Then cdk.json's context is read and overridden
    assert context["stage"] == "prod"
    assert context["search"] == "es"
    assert context["maxReceiveCount"] == 5  # from cdk.json


def test_an_argument_without_equals_sign_is_refused() -> None:
    with pytest.raises(SystemExit, match="key=value"):
        cli_context(["prod"])


def test_per_key_limits_come_from_context_strings_with_no_quota_by_default() -> None:
    # Given per-key limits as `-c key=value` delivers them
    config = from_context({"keyThrottleRate": "2.5", "keyThrottleBurst": "5"}.get)
    # Then they are typed, and no quota is set unless asked for
    assert (config.key_throttle_rate, config.key_throttle_burst) == (2.5, 5)
    assert config.key_quota_limit is None


def test_an_unknown_quota_period_is_refused() -> None:
    with pytest.raises(ValidationError, match="key_quota_period"):
        from_context({"keyQuotaLimit": "1000", "keyQuotaPeriod": "HOUR"}.get)


def test_search_admin_principals_are_read_as_a_comma_separated_list_of_arns() -> None:
    # Given two operator ARNs as `-c searchAdminPrincipals=...` delivers them (one repeated)
    role, user = "arn:aws:iam::123456789012:role/ops", "arn:aws:iam::123456789012:user/alice"
    ops = f"{role}, {user},{role}"
    # When read / Then each is kept once, in order
    assert from_context({"searchAdminPrincipals": ops}.get).admin_principals == [role, user]


def test_a_search_admin_principal_that_is_no_role_or_user_arn_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"searchAdminPrincipals \['ops-role'\]"):
        from_context({"searchAdminPrincipals": "arn:aws:iam::123456789012:role/ops,ops-role"}.get)


def test_the_deploy_docs_list_every_context_key() -> None:
    # Given the context table of docs/aws.md
    docs = (ROOT / "docs" / "aws.md").read_text()
    table = docs[docs.index("### Context (`cdk.json` or `-c key=value`)") :]
    table = table[: table.index("\n\n", table.index("| key |"))]
    # Then every key the stack reads is a row of it
    keys = {field.alias or name for name, field in StackConfig.model_fields.items()}
    assert [key for key in sorted(keys) if f"`{key}`" not in table] == []
