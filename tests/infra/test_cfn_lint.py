"""cfn-lint over every synthesized variant: CloudFormation's own resource schemas and rules, the
checks `cdk synth` does not make (a property CloudFormation refuses, a value out of range).

Linting one template takes ~10 s (schema validation of every resource), so each result is kept in
pytest's cache under the digest of the template with its asset hashes blanked (they change with
any function's code and mean nothing to cfn-lint) and cfn-lint's version; templates that are not
cached yet are linted side by side in a few processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import version
from typing import Any

import pytest

from tests.infra.variants import VARIANTS

# Linting every variant afresh takes minutes on a busy 2-core machine (once per template change).
pytestmark = pytest.mark.timeout(1200)

REGION = "us-east-1"
ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")
Finding = tuple[str, str, str]  # rule id, message, path


def blank_assets(template: dict[str, Any]) -> str:
    """The template as JSON with every asset hash made the same."""
    return ASSET_HASH.sub("0" * 64, json.dumps(template, sort_keys=True))


def lint(text: str) -> list[Finding]:
    from cfnlint.api import ManualArgs
    from cfnlint.api import lint as cfn_lint

    matches = cfn_lint(text, config=ManualArgs(regions=[REGION]))
    return [(match.rule.id, match.message, "/".join(map(str, match.path))) for match in matches]


@pytest.fixture(scope="module")
def findings(
    request: pytest.FixtureRequest, templates: dict[str, dict[str, Any]]
) -> dict[str, list[Finding]]:
    """Variant name → cfn-lint's findings on its template."""
    cache = request.config.cache
    texts = {variant.name: blank_assets(templates[variant.name]) for variant in VARIANTS}
    tool = version("cfn-lint")
    keys = {
        name: f"memory-engine/cfn-lint/{hashlib.sha256((tool + text).encode()).hexdigest()[:32]}"
        for name, text in texts.items()
    }
    found: dict[str, list[Finding]] = {}
    for name, key in keys.items():
        hit = cache.get(key, None) if cache is not None else None
        if hit is not None:
            found[name] = [tuple(item) for item in hit]  # type: ignore[misc]
    missing = [name for name in texts if name not in found]
    if missing:
        workers = max(1, min(len(missing), os.cpu_count() or 1, 4))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for name, result in zip(missing, pool.map(lint, [texts[name] for name in missing]), strict=True):
                found[name] = result
                if cache is not None:
                    cache.set(keys[name], [list(item) for item in result])
    return found


@pytest.mark.parametrize("variant", [variant.name for variant in VARIANTS])
def test_cfn_lint_finds_no_error_in_the_variant(variant: str, findings: dict[str, list[Finding]]) -> None:
    errors = [finding for finding in findings[variant] if finding[0].startswith("E")]
    assert errors == []


def test_cfn_lint_reports_an_error_it_is_shown() -> None:
    # Given a template with a queue whose visibility timeout is past SQS's 12 hours
    template = {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 50_000}},
        }
    }
    # When linted / Then the value is an error
    assert any(rule.startswith("E") for rule, _, _ in lint(json.dumps(template)))
