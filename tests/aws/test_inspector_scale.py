"""The inspector's thread list costs the same per page however large the tenant (DynamoDB on moto):
a page of sessions and fact scopes reads as many keys and items as it shows, never the tenant's
memories nor a scope's facts (each scope's count is kept as its facts change), while the
whole-tenant listing it replaced grew with them. Counts, never timings (`python -m
bench.speed.inspector_pages` records them at 2,000 and 20,000 sessions)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bench.speed.inspector_pages import one_size

# Pages of 20: both tenants have more sessions and more scopes than a page holds, and the larger
# one three times the sessions and memories with three times the facts in each scope.
PAGE = 20


@pytest.fixture(scope="module")
def sizes() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    small = one_size(240, PAGE, facts=120, facts_per_scope=2)
    yield small, one_size(720, PAGE, facts=360, facts_per_scope=6)


def test_a_page_reads_and_weighs_the_same_whatever_the_tenant_holds(
    sizes: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    small, large = sizes
    assert large["tenant"]["memories"] == 3 * small["tenant"]["memories"]
    assert (
        large["tenant"]["facts"] // large["tenant"]["scopes"]
        == 3 * small["tenant"]["facts"] // small["tenant"]["scopes"]
    )
    for page in ("first_page", "next_page", "next_scopes_page"):
        assert large[page]["calls"] == small[page]["calls"], page
        assert large[page]["items_read"] == small[page]["items_read"], page
        assert large[page]["answer_bytes"] == small[page]["answer_bytes"], page


def test_a_page_reads_about_what_it_shows(sizes: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, large = sizes
    # A page of sessions: one more key (is there a next page?) and the session items; a page of
    # scopes: one more count item's key and the count items, whatever each scope holds
    assert large["next_page"]["items_read"] <= 2 * (PAGE + 1)
    assert large["next_scopes_page"]["items_read"] <= 2 * (PAGE + 1)
    assert "Scan" not in large["first_page"]["calls"]


def test_the_whole_tenant_listing_it_replaced_grew_with_the_tenant(
    sizes: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    small, large = sizes
    before = large["whole_tenant_before"]
    assert before["items_read"] > 2 * small["whole_tenant_before"]["items_read"]
    assert before["items_read"] >= large["tenant"]["sessions"] + large["tenant"]["memories"]
    assert before["answer_bytes"] > 3 * large["first_page"]["answer_bytes"]
