"""cdk-nag AwsSolutions: the whole app synthesizes clean, and a new finding fails synth."""

from __future__ import annotations

import pytest
from aws_cdk import Stack
from aws_cdk import aws_sqs as sqs

from infra.app import check, new_app
from tests.infra.variants import VARIANTS, Synthesized


def test_every_stage_synthesizes_with_cdk_nag_on_and_no_open_finding(synthesized: Synthesized) -> None:
    # Given every variant of the stack synthesized with AwsSolutionsChecks (conftest)
    # When the validation report is read
    violations = [v for plugin in synthesized.report["pluginReports"] for v in plugin.get("violations", [])]
    # Then nothing is reported
    assert violations == []
    # and the dev stack with more routes, and prod deployed again
    assert len(synthesized.templates) == len(VARIANTS) + 2


def test_an_unacknowledged_finding_fails_the_synth(tmp_path_factory: pytest.TempPathFactory) -> None:
    # Given an app with cdk-nag on and a queue that breaks AwsSolutions rules (no DLQ, no TLS-only)
    app = new_app(outdir=str(tmp_path_factory.mktemp("nag")))
    stack = Stack(app, "Offender")
    sqs.Queue(stack, "Plain")
    check(app)
    # When it is synthesized / Then synth fails, naming the rule
    with pytest.raises(Exception, match="AwsSolutions-SQS4"):
        app.synth()
