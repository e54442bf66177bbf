"""Which AWS resources each function may touch: least privilege, decided per function.

A route's needs are declared on the route itself (`functions/routes.py`, `Route.needs`); the
functions that are no route (the worker, the authorizer, the index bootstrap) are listed here. A
route that declares none, or two routes of one function that disagree, fail the synth: no
function silently gets more than it asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from functions.routes import ENGINE_NEEDS, ROUTES, Need, Route

__all__ = [
    "ENGINE_NEEDS",
    "FUNCTION_NEEDS",
    "TABLE_ACTIONS",
    "MissingNeeds",
    "Need",
    "function_needs",
    "uses_engine",
]

# Each table need is one DynamoDB action (infra/data.py groups them into statements).
TABLE_ACTIONS: Mapping[Need, str] = {
    Need.TABLE_GET: "dynamodb:GetItem",
    Need.TABLE_QUERY: "dynamodb:Query",
    Need.TABLE_BATCH_GET: "dynamodb:BatchGetItem",
    Need.TABLE_PUT: "dynamodb:PutItem",
    Need.TABLE_UPDATE: "dynamodb:UpdateItem",
    Need.TABLE_DELETE: "dynamodb:DeleteItem",
    Need.TABLE_BATCH_WRITE: "dynamodb:BatchWriteItem",
}

# Functions that are not routes.
OTHER_FUNCTION_NEEDS: Mapping[str, frozenset[Need]] = {
    # Receiving from its queue is granted with its event source mapping (infra/worker.py), not
    # listed here. It sends a follow-up job when a busy session still holds a batch's worth of
    # turns.
    # It builds the whole engine, so it needs what the engine does.
    "extraction_worker": ENGINE_NEEDS,
    "authorizer": frozenset({Need.KEYS_READ}),
    "index_bootstrap": frozenset({Need.INDEX_ADMIN}),
}


class MissingNeeds(ValueError):
    """A route of functions/routes.py whose permissions cannot be decided."""


def function_needs(routes: Iterable[Route] = ROUTES) -> dict[str, frozenset[Need]]:
    """Function folder → its needs, from the routes' declarations and the functions above."""
    found: dict[str, frozenset[Need]] = {}
    for route in routes:
        if route.needs is None:
            raise MissingNeeds(
                f"Route {route.method} {route.path} ({route.function}) declares no needs: add "
                "needs=needs(...) in functions/routes.py with what it may touch (GET, QUERY, "
                "BATCH_GET, PUT, UPDATE, DELETE, BATCH_WRITE, SEND, SEARCH, INDEX, EMBED, EXTRACT; "
                "needs() for nothing)."
            )
        if found.setdefault(route.function, route.needs) != route.needs:
            raise MissingNeeds(
                f"The routes of {route.function} declare different needs: give {route.method} "
                f"{route.path} the same needs as its function's other routes."
            )
    return found | dict(OTHER_FUNCTION_NEEDS)


# Every function of the route table, with its needs (the stack reads its own routes' needs).
FUNCTION_NEEDS: dict[str, frozenset[Need]] = function_needs()


def uses_engine(needs: frozenset[Need]) -> bool:
    """Whether the function builds the whole engine (and so needs its whole configuration)."""
    return bool(needs - {Need.KEYS_READ})
