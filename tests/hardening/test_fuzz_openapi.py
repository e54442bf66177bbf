"""Property-based fuzzing of the local server against its own OpenAPI document (schemathesis).

Valid and invalid requests are generated for every operation in GET /v1/openapi.json and sent
over real HTTP. Every answer must be a documented status with a body and headers matching the
spec, never a 5xx, and routes that declare the API key must refuse requests without one.

The run is derandomised so CI sees the same cases every time; FUZZ_RANDOM=1 explores new ones and
FUZZ_CASES sets how many cases are spread over the operations (default 1,500).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.fakes.stack import LOCAL_KEY, local_stack, serve_http

CASES = int(os.environ.get("FUZZ_CASES", "1500"))
MINIMUM_CASES = 1_000
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    ignored_auth,
]


def test_a_thousand_generated_requests_get_no_5xx_and_only_answers_the_spec_documents(tmp_path: Path) -> None:
    with local_stack(tmp_path) as stack, serve_http(stack) as base, requests.Session() as session:
        status, _, spec = stack.call("GET", "/v1/openapi.json", key=None)
        assert status == 200
        schema = schemathesis.openapi.from_dict(spec)
        auth = {"Authorization": f"Bearer {LOCAL_KEY}"}
        cases: Counter[str] = Counter()
        statuses: Counter[int] = Counter()

        operations = [result.ok() for result in schema.get_all_operations()]
        # Operations without a body or parameters (health) have a single case; the rest share out.
        per_operation = math.ceil(CASES / max(1, len(operations) - 1))
        for operation in operations:
            strategy = operation.as_strategy(GenerationMode.POSITIVE) | operation.as_strategy(
                GenerationMode.NEGATIVE
            )

            @settings(
                max_examples=per_operation,
                deadline=None,
                database=None,
                derandomize=os.environ.get("FUZZ_RANDOM") != "1",
                phases=[Phase.explicit, Phase.generate, Phase.shrink],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy)
            def send(case: Any) -> None:
                response = case.call(base_url=base, session=session, headers=auth)
                case.validate_response(response, checks=CHECKS, headers=auth)
                cases[case.operation.label] += 1
                statuses[response.status_code] += 1

            send()

    print(f"fuzzed {sum(cases.values())} cases: {dict(cases)}; statuses {dict(statuses)}")
    labels = {operation.label for operation in operations}
    assert set(cases) == labels, "every operation was exercised"
    assert sum(cases.values()) >= MINIMUM_CASES, cases
    assert not [code for code in statuses if code >= 500], statuses
    assert statuses[200] > 0 and statuses[422] > 0, statuses  # both valid and invalid requests got through
