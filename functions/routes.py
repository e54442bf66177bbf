"""The route table as data: read by the local server and by the CDK app alike.

A route added here is served locally and gets its own Lambda and API Gateway method.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    function: str  # folder under functions/ holding handler.py
    auth: bool = True


ROUTES: tuple[Route, ...] = (
    Route("GET", "/v1/engine/health/", "health", auth=False),
    Route("POST", "/v1/engine/consolidate/", "consolidate"),
    Route("POST", "/v1/engine/retrieve/", "retrieve"),
    Route("DELETE", "/v1/engine/delete/", "delete"),
    Route("POST", "/v1/engine/fork-delete/", "fork_delete"),
    Route("POST", "/v1/engine/embed/", "embed"),
)

# Functions fed by a queue, not by a route: folder under functions/ holding handler.py. The CDK app
# gives each its FIFO queue, dead-letter queue and event source mapping.
WORKERS: tuple[str, ...] = ("extraction_worker",)


def functions() -> list[str]:
    """Every function folder, once, in route order."""
    return list(dict.fromkeys(route.function for route in ROUTES))
