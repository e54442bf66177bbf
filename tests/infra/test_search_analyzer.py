"""The index's text analysis (nori by default) reaches every function that searches or writes."""

from __future__ import annotations

from typing import Any

from tests.infra import cfn


def test_engine_functions_are_told_the_nori_analyzer(dev: dict[str, Any]) -> None:
    for folder in ("retrieve", "consolidate", "extraction_worker", "index_bootstrap"):
        variables = cfn.environment(dev, cfn.functions_by_folder(dev)[folder])
        assert variables["MEMORY_ENGINE_OPENSEARCH_ANALYZER"] == "nori", folder


def test_changing_the_analyzer_reruns_the_index_bootstrap(dev: dict[str, Any]) -> None:
    ((_, resource),) = cfn.resources(dev, "AWS::CloudFormation::CustomResource").items()
    assert resource["Properties"]["Analyzer"] == "nori"
