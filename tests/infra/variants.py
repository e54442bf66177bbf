"""Every variant of the stack the context can ask for, synthesized once and kept on disk.

The matrix is stage (dev, prod) × search (aoss, es) × embedder (lambda, sagemaker) × extractor
(builtin, llm): 16 stacks, plus the dev stack with two more routes (as a later change to routes.py
would add them) and the default prod stack deployed again after a destroy (with the kept table).
Synthesizing runs a node process (jsii) for minutes, so the templates and cdk-nag's report are
cached under a digest of everything they follow from: the infra sources, the functions and the
core they stage or import, cdk.json, pyproject.toml, this module and the CDK libraries' versions.
A change to any of them synthesizes again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

from functions.routes import REST_ROUTES, Need, Route, needs

ROOT = Path(__file__).resolve().parents[2]
Stage = Literal["dev", "prod"]
Search = Literal["aoss", "es"]
Embedder = Literal["lambda", "sagemaker"]
Extractor = Literal["builtin", "llm"]

LLM_SECRET = "memory-engine/openai"
SAGEMAKER_ENDPOINT = "Big-Embedder"
# An operator role of `searchAdminPrincipals` (the prod variants and MORE_ROUTES name it).
OPERATOR = "arn:aws:iam::123456789012:role/memory-engine-operator"
CHAT_MODEL = "gpt-4o-mini"
# The prod stage deployed again after `cdk destroy`, with the table the destroy kept.
PROD_AGAIN = "MemoryEngine-prod-again"
KEPT_TABLE = "MemoryEngine-prod-DataTable1A2B3C4D-0123456789AB"
# routes.py with two more routes, as a later change would add them (and an operator on the
# collection's data-access policy, the Serverless counterpart of the prod variants').
MORE_ROUTES = "MemoryEngine-dev-more-routes"
NEW_ROUTES = (
    Route("POST", "/v1/engine/summaries/", "engine_summaries", needs=needs(Need.TABLE_GET, Need.TABLE_PUT)),
    Route("GET", "/v1/engine/summaries/{id}", "engine_summary_get", needs=needs(Need.TABLE_GET)),
)


@dataclass(frozen=True)
class Variant:
    stage: Stage
    search: Search
    embedder: Embedder
    extractor: Extractor

    @property
    def name(self) -> str:
        return f"MemoryEngine-{self.stage}-{self.search}-{self.embedder}-{self.extractor}"

    def context(self) -> dict[str, Any]:
        """The StackConfig fields this variant sets (the rest keep their defaults)."""
        fields: dict[str, Any] = {"stage": self.stage, "search": self.search}
        if self.embedder == "sagemaker":
            fields |= {"embedder": "sagemaker", "sagemaker_endpoint": SAGEMAKER_ENDPOINT}
            fields["embedding_dimension"] = 4096
        if self.extractor == "llm":
            fields |= {
                "extractor": "llm",
                "llm_model": "gpt-4o-mini",
                "openai_base_url": "https://llm.example.com/v1",
                "openai_api_key_secret": LLM_SECRET,
            }
        if self.stage == "prod":
            # Every other option a production deployment may set.
            fields |= {
                "max_receive_count": 6,
                "authorizer_cache_seconds": 60,
                "key_throttle_rate": 5,
                "key_throttle_burst": 10,
                "key_quota_limit": 100_000,
                "key_quota_period": "MONTH",
                "waf_acl_arn": "arn:aws:wafv2:us-east-1:123456789012:regional/webacl/memory-engine/abc",
                "alarm_email": "oncall@example.com",
                "search_admin_principals": OPERATOR,
                "chat_model": CHAT_MODEL,
            }
        return fields


VARIANTS: tuple[Variant, ...] = tuple(
    Variant(stage, search, embedder, extractor)
    for stage, search, embedder, extractor in itertools.product(
        ("dev", "prod"), ("aoss", "es"), ("lambda", "sagemaker"), ("builtin", "llm")
    )
)
# The default deployment: dev, OpenSearch Serverless, the embedding image, built-in extraction.
DEV = Variant("dev", "aoss", "lambda", "builtin").name
# The default deployment in prod: what PROD_AGAIN deploys again.
PROD_SERVERLESS = Variant("prod", "aoss", "lambda", "builtin")
# Every alternative at once: prod, a managed OpenSearch domain, SageMaker, LLM extraction, WAF.
PROD = Variant("prod", "es", "sagemaker", "llm").name
# A managed domain in dev (one node): the cheap variant of the domain.
DEV_DOMAIN = Variant("dev", "es", "lambda", "builtin").name
# The defaults with LLM extraction: the functions that read the LLM key, beside the image.
DEV_LLM = Variant("dev", "aoss", "lambda", "llm").name


@dataclass(frozen=True)
class Synthesized:
    templates: dict[str, dict[str, Any]]
    report: dict[str, Any]


def _sources() -> Iterator[Path]:
    for folder in ("infra", "functions", "layers/core/memory_engine"):
        yield from sorted(path for path in (ROOT / folder).rglob("*") if path.is_file() and _kept(path))
    yield from (ROOT / name for name in ("cdk.json", "pyproject.toml", "tests/infra/variants.py"))


def _kept(path: Path) -> bool:
    return "__pycache__" not in path.parts and path.suffix != ".pyc"


def digest() -> str:
    """What the templates follow from, as one hash."""
    found = hashlib.sha256()
    for package in ("aws-cdk-lib", "cdk-nag", "constructs"):
        found.update(f"{package}={version(package)}\n".encode())
    for path in _sources():
        found.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return found.hexdigest()[:32]


def placeholder_layer(folder: Path) -> Path:
    (folder / "python").mkdir(parents=True, exist_ok=True)
    (folder / "python" / "PLACEHOLDER").write_text("tests only: `make layer` builds the real layer\n")
    return folder


def synthesize(layer: Path, outdir: Path) -> Synthesized:
    """Every variant in one CDK app, cdk-nag on (synth raises on a finding nobody acknowledged)."""
    from infra.app import add_stack, check, new_app
    from infra.config import StackConfig
    from infra.stack import MemoryEngineStack

    app = new_app(outdir=str(outdir))
    for variant in VARIANTS:
        add_stack(app, StackConfig(layer_dir=layer, **variant.context()), variant.name)
    MemoryEngineStack(
        app,
        MORE_ROUTES,
        config=StackConfig(search_admin_principals=OPERATOR, layer_dir=layer),
        routes=(*REST_ROUTES, *NEW_ROUTES),
    )
    again = StackConfig(layer_dir=layer, existing_table_name=KEPT_TABLE, **PROD_SERVERLESS.context())
    add_stack(app, again, PROD_AGAIN)
    check(app)
    assembly = app.synth()
    names = [variant.name for variant in VARIANTS] + [MORE_ROUTES, PROD_AGAIN]
    templates = {name: assembly.get_stack_by_name(name).template for name in names}
    report = json.loads((outdir / "validation-report.json").read_text())
    return Synthesized(templates=templates, report=report)


def cached(folder: Path, layer: Path, outdir: Path) -> Synthesized:
    """The synthesized variants from `folder` when their digest is there, else synthesized now."""
    wanted = folder / f"{digest()}.json"
    if wanted.is_file():
        stored = json.loads(wanted.read_text())
        return Synthesized(templates=stored["templates"], report=stored["report"])
    found = synthesize(layer, outdir)
    for stale in folder.glob("*.json"):
        stale.unlink()
    partial = wanted.with_suffix(".partial")
    partial.write_text(json.dumps({"templates": found.templates, "report": found.report}))
    partial.replace(wanted)
    return found
