"""The CDK app: `npx cdk synth` (cdk.json runs `python -m infra.app`) or `make synth`.

Run directly, `python -m infra.app [key=value ...]` reads the context of cdk.json itself, so a
synth needs no CDK CLI; `key=value` arguments override it like `-c key=value` does.
cdk-nag's AwsSolutions checks run on every synth: an unacknowledged finding fails it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from aws_cdk import App, Environment, Validations
from cdk_nag import AwsSolutionsChecks

from infra.config import ROOT, StackConfig, from_context
from infra.stack import MemoryEngineStack

# Asset metadata lets `sam local invoke` find each function's code in cdk.out.
SAM_CONTEXT = {"aws:cdk:enable-asset-metadata": True, "aws:cdk:enable-path-metadata": True}


def new_app(context: Mapping[str, Any] | None = None, outdir: str | None = None) -> App:
    return App(context={**SAM_CONTEXT, **(context or {})}, outdir=outdir)


def add_stack(app: App, config: StackConfig, stack_id: str | None = None) -> MemoryEngineStack:
    """One stage of the service, in the account and region the CDK CLI resolved (if any)."""
    account, region = os.environ.get("CDK_DEFAULT_ACCOUNT"), os.environ.get("CDK_DEFAULT_REGION")
    return MemoryEngineStack(
        app, stack_id or config.stack_name, config=config, env=Environment(account=account, region=region)
    )


def check(app: App) -> None:
    """cdk-nag AwsSolutions on the whole app: synth fails on any unacknowledged finding."""
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))


def build_app(context: Mapping[str, Any] | None = None, outdir: str | None = None) -> App:
    """The app with one stack for the context's stage, cdk-nag on."""
    app = new_app(context, outdir)
    add_stack(app, from_context(app.node.try_get_context))
    check(app)
    return app


def cli_context(argv: Sequence[str]) -> dict[str, Any]:
    """cdk.json's context, unless the CDK CLI passed its own; then `key=value` arguments on top."""
    context: dict[str, Any] = {}
    if "CDK_CONTEXT_JSON" not in os.environ:
        cdk_json = ROOT / "cdk.json"
        if cdk_json.exists():
            context.update(json.loads(cdk_json.read_text()).get("context", {}))
    for argument in argv:
        key, sep, value = argument.partition("=")
        if not sep:
            raise SystemExit(f"expected key=value, got {argument!r}")
        context[key] = value
    return context


def main(argv: Sequence[str] | None = None) -> None:
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    build_app(cli_context(sys.argv[1:] if argv is None else argv)).synth()


if __name__ == "__main__":
    main()
