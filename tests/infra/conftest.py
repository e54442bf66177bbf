"""One synth for the whole session: four variants of the stack in one CDK app, cdk-nag on.

Synthesizing runs a node process (jsii) and takes seconds per stack, so every template test
reads the templates made here. The layer is a tiny placeholder folder: the real one
(`make layer`) needs PyPI, and what the template says does not depend on its content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from functions.routes import REST_ROUTES, Need, Route, needs
from infra.app import add_stack, check, new_app
from infra.config import StackConfig
from infra.stack import MemoryEngineStack

# The default deployment: dev, OpenSearch Serverless, the embedding image, built-in extraction.
DEV = "MemoryEngine-dev"
# Every alternative at once: prod, a managed OpenSearch domain, SageMaker, LLM extraction, WAF.
PROD = "MemoryEngine-prod"
# An operator role of `searchAdminPrincipals` (prod and MORE_ROUTES name it).
OPERATOR = "arn:aws:iam::123456789012:role/memory-engine-operator"
# A managed domain in dev (one node): the cheap variant of the domain.
DEV_DOMAIN = "MemoryEngine-dev-domain"
# routes.py with two more routes, as a later change would add them (and an operator on the
# collection's data-access policy, the Serverless counterpart of PROD's).
MORE_ROUTES = "MemoryEngine-dev-more-routes"
NEW_ROUTES = (
    Route(
        "POST", "/v1/engine/summaries/", "engine_summaries", needs=needs(Need.TABLE_READ, Need.TABLE_WRITE)
    ),
    Route("GET", "/v1/engine/summaries/{id}", "engine_summary_get", needs=needs(Need.TABLE_READ)),
)


@dataclass(frozen=True)
class Synthesized:
    templates: dict[str, dict[str, Any]]
    report: dict[str, Any]

    def template(self, stack: str) -> Template:
        return Template.from_json(self.templates[stack])


def placeholder_layer(folder: Path) -> Path:
    (folder / "python").mkdir(parents=True, exist_ok=True)
    (folder / "python" / "PLACEHOLDER").write_text("tests only: `make layer` builds the real layer\n")
    return folder


def prod_config(layer: Path) -> StackConfig:
    return StackConfig(
        stage="prod",
        search="es",
        embedder="sagemaker",
        sagemaker_endpoint="Big-Embedder",
        embedding_dimension=4096,
        extractor="llm",
        llm_model="gpt-4o-mini",
        openai_base_url="https://llm.example.com/v1",
        openai_api_key_secret="memory-engine/openai",
        max_receive_count=3,
        authorizer_cache_seconds=60,
        key_throttle_rate=5,
        key_throttle_burst=10,
        key_quota_limit=100_000,
        key_quota_period="MONTH",
        waf_acl_arn="arn:aws:wafv2:us-east-1:123456789012:regional/webacl/memory-engine/abc",
        alarm_email="oncall@example.com",
        search_admin_principals=OPERATOR,
        layer_dir=layer,
    )


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    layer = placeholder_layer(tmp_path_factory.mktemp("layer"))
    outdir = tmp_path_factory.mktemp("cdk.out")
    app = new_app(outdir=str(outdir))
    add_stack(app, StackConfig(layer_dir=layer), DEV)
    add_stack(app, prod_config(layer), PROD)
    add_stack(app, StackConfig(search="es", layer_dir=layer), DEV_DOMAIN)
    MemoryEngineStack(
        app,
        MORE_ROUTES,
        config=StackConfig(search_admin_principals=OPERATOR, layer_dir=layer),
        routes=(*REST_ROUTES, *NEW_ROUTES),
    )
    check(app)
    assembly = app.synth()  # raises when cdk-nag reports a finding nobody acknowledged
    names = (DEV, PROD, DEV_DOMAIN, MORE_ROUTES)
    templates = {name: assembly.get_stack_by_name(name).template for name in names}
    report = json.loads((outdir / "validation-report.json").read_text())
    return Synthesized(templates=templates, report=report)


@pytest.fixture(scope="session")
def dev(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates[DEV]


@pytest.fixture(scope="session")
def prod(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates[PROD]


@pytest.fixture(scope="session")
def dev_domain(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates[DEV_DOMAIN]


@pytest.fixture(scope="session")
def more_routes(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates[MORE_ROUTES]
