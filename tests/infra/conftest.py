"""One synth for the whole session: every variant of the stack in one CDK app, cdk-nag on, kept in
pytest's cache under the digest of what the templates follow from (tests/infra/variants.py).

The layer is a tiny placeholder folder: the real one (`make layer`) needs PyPI, and what the
template says does not depend on its content. MEMORY_ENGINE_SYNTH_CACHE=0 synthesizes afresh.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.infra.variants import (
    DEV,
    DEV_DOMAIN,
    DEV_LLM,
    MORE_ROUTES,
    PROD,
    Synthesized,
    cached,
    placeholder_layer,
    synthesize,
)


@pytest.fixture(scope="session")
def synthesized(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    layer = placeholder_layer(tmp_path_factory.mktemp("layer"))
    outdir = tmp_path_factory.mktemp("cdk.out")
    if os.environ.get("MEMORY_ENGINE_SYNTH_CACHE") == "0" or getattr(request.config, "cache", None) is None:
        return synthesize(layer, outdir)
    return cached(request.config.cache.mkdir("memory-engine-synth"), layer, outdir)


@pytest.fixture(scope="session")
def templates(synthesized: Synthesized) -> dict[str, dict[str, Any]]:
    return synthesized.templates


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
def dev_llm(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates[DEV_LLM]


@pytest.fixture(scope="session")
def more_routes(synthesized: Synthesized) -> dict[str, Any]:
    return synthesized.templates[MORE_ROUTES]
