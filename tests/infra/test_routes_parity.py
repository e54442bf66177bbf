"""routes.py ↔ API methods ↔ handler folders: one source of truth for what the service serves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from functions.routes import REST_ROUTES, ROUTES, WORKERS
from infra.access import FUNCTION_NEEDS
from tests.infra import cfn
from tests.infra.variants import NEW_ROUTES

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"
# Folders that are functions but not routes: deployed by the infrastructure itself.
INFRA_FUNCTIONS = {"authorizer", "index_bootstrap", "embedder_image"}


def route_key(method: str, path: str) -> tuple[str, str]:
    return method, "/" + path.strip("/")


def test_every_route_has_a_handler_folder() -> None:
    # Given the route table / When each route's folder is looked up / Then it holds a handler.py
    missing = [r.function for r in REST_ROUTES if not (FUNCTIONS / r.function / "handler.py").is_file()]
    assert missing == []


def test_every_route_is_a_method_of_the_api_and_nothing_else_is(dev: dict[str, Any]) -> None:
    # Given the synthesized API / When its methods are listed with their paths
    methods = set(cfn.method_paths(dev))
    # Then they are exactly the routes of routes.py
    assert methods == {route_key(r.method, r.path) for r in REST_ROUTES}


def test_every_method_calls_the_function_of_its_route_folder(dev: dict[str, Any]) -> None:
    # Given the methods and the functions of the template
    methods = cfn.method_paths(dev)
    by_folder = cfn.functions_by_folder(dev)
    # When each route's method integration is followed / Then it reaches that route's handler
    for route in REST_ROUTES:
        method = methods[route_key(route.method, route.path)]
        assert cfn.integrated_function(method) == by_folder[route.function], route


def test_each_route_function_is_deployed_once_even_when_several_routes_share_it(dev: dict[str, Any]) -> None:
    handlers = [
        body["Properties"]["Handler"]
        for body in cfn.resources(dev, "AWS::Lambda::Function").values()
        if "Handler" in body["Properties"]
    ]
    assert len(handlers) == len(set(handlers))
    assert {r.function for r in REST_ROUTES} <= set(cfn.functions_by_folder(dev))


def test_every_handler_folder_is_a_route_a_worker_or_an_infrastructure_function() -> None:
    # Given the folders under functions/ / Then none is an orphan the CDK app would not deploy
    folders = {p.name for p in FUNCTIONS.iterdir() if p.is_dir() and not p.name.startswith("__")}
    known = {r.function for r in REST_ROUTES} | set(WORKERS) | INFRA_FUNCTIONS
    assert folders - known == set()


@pytest.mark.parametrize("worker", WORKERS)
def test_every_worker_is_deployed_behind_its_queue(dev: dict[str, Any], worker: str) -> None:
    # Given a worker of routes.WORKERS / When the template's event source mappings are read
    function = cfn.functions_by_folder(dev)[worker]
    mapped = [
        body["Properties"]["FunctionName"]
        for body in cfn.resources(dev, "AWS::Lambda::EventSourceMapping").values()
    ]
    # Then its function is fed by a queue
    assert {"Ref": function} in mapped


@pytest.mark.parametrize("worker", WORKERS)
def test_every_worker_has_a_handler_folder(worker: str) -> None:
    if not (FUNCTIONS / worker).exists():
        pytest.skip(f"functions/{worker}/ comes with the AWS backends issue (#3)")
    assert (FUNCTIONS / worker / "handler.py").is_file()


def test_every_function_with_narrowed_permissions_exists() -> None:
    # A stale entry in infra/access.py would silently stop narrowing anything.
    known = {r.function for r in REST_ROUTES} | set(WORKERS) | INFRA_FUNCTIONS
    assert set(FUNCTION_NEEDS) - known == set()


def test_a_route_added_to_routes_py_gets_its_method_function_and_guard_with_no_other_edit(
    more_routes: dict[str, Any],
) -> None:
    # Given the stack built from routes.py plus two new routes (a path parameter, a colon verb)
    methods = cfn.method_paths(more_routes)
    by_folder = cfn.functions_by_folder(more_routes)
    for route in NEW_ROUTES:
        # Then each has its method, behind the authorizer, calling its own new function
        method = methods[route_key(route.method, route.path)]
        assert method["AuthorizationType"] == "CUSTOM"
        assert cfn.integrated_function(method) == by_folder[route.function]
        # with the whole engine configuration until infra/access.py narrows it
        assert cfn.environment(more_routes, by_folder[route.function])["MEMORY_ENGINE_BACKEND"] == "aws"


def test_a_route_api_gateway_cannot_hold_has_a_served_spelling_of_the_same_function() -> None:
    # Given the routes only the local server serves (a ':' in the path)
    local_only = [route for route in ROUTES if not route.rest_api]
    # Then API Gateway serves the same function under another path
    served = {(route.method, route.function) for route in REST_ROUTES}
    assert local_only and all((route.method, route.function) in served for route in local_only)
