"""How the LangGraph store writes items as memory-bank facts and reads them back (pure functions)."""

from __future__ import annotations

import json

import pytest
from langgraph.store.base import MatchCondition

from memory_engine.models.bank import MAX_FACT_CHARS, BankMemory
from memory_engine_langgraph import mapping

CREATED = "2026-12-01T10:00:00+00:00"


def stored(fact: str, name: str = "memories/m1", updated: str = "2026-12-02T10:00:00.000000Z") -> BankMemory:
    return BankMemory(name=name, fact=fact, scope={}, createTime=updated, updateTime=updated)


def test_an_item_read_back_from_its_fact_has_its_key_value_and_times() -> None:
    value = {"text": "지훈은 땅콩 알레르기가 있다.", "tags": ["health"], "level": 2}
    fact = mapping.fact_of("diet", value, CREATED, None)

    item = mapping.item_of(stored(fact), ("users", "42"))

    assert item is not None
    assert (item.key, item.value, item.namespace) == ("diet", value, ("users", "42"))
    assert item.created_at.isoformat() == CREATED
    assert item.updated_at.isoformat() == "2026-12-02T10:00:00+00:00"


def test_the_fact_starts_with_the_values_strings_so_that_is_what_the_bank_embeds() -> None:
    fact = mapping.fact_of("k", {"title": "Cello lessons", "n": 3, "notes": ["Tuesdays"]}, CREATED, None)

    assert fact.split("\n")[:2] == ["Cello lessons", "Tuesdays"]


def test_index_fields_choose_the_text_and_an_empty_choice_embeds_the_json_alone() -> None:
    value = {"title": "Cello lessons", "notes": ["Tuesdays", "Room 4"]}

    chosen = mapping.fact_of("k", value, CREATED, ["notes[*]"])
    none = mapping.fact_of("k", value, CREATED, [])

    assert chosen.split("\n")[:2] == ["Tuesdays", "Room 4"]
    assert json.loads(none)["value"] == value


def test_a_value_too_large_for_one_fact_is_refused_naming_the_limit() -> None:
    with pytest.raises(ValueError, match=str(MAX_FACT_CHARS)):
        mapping.fact_of("big", {"text": "x" * MAX_FACT_CHARS}, CREATED, None)


def test_the_text_is_left_out_when_text_and_json_would_not_fit_together() -> None:
    value = {"text": "y" * (MAX_FACT_CHARS // 2)}

    fact = mapping.fact_of("k", value, CREATED, None)

    assert "\n" not in fact and json.loads(fact)["value"] == value


def test_a_fact_this_store_did_not_write_is_no_item() -> None:
    assert mapping.item_of(stored("The user likes tea."), ("n",)) is None


def test_the_newest_version_of_a_key_comes_first() -> None:
    old = stored(mapping.fact_of("k", {"v": 1}, CREATED, None), "memories/a", "2026-12-02T10:00:00.000000Z")
    new = stored(mapping.fact_of("k", {"v": 2}, CREATED, None), "memories/b", "2026-12-03T10:00:00.000000Z")

    versions = mapping.versions([old, new], ("n",))["k"]

    assert [(item.value["v"], name) for item, name in versions] == [(2, "memories/b"), (1, "memories/a")]


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        ({"done": True}, True),
        ({"done": False}, False),
        ({"meta": {"lang": "ko"}}, True),
        ({"priority": {"$gte": 2, "$lt": 3}}, True),
        ({"priority": {"$gt": 2}}, False),
        ({"priority": {"$ne": 2}}, False),
        ({"tags": ["a", "b"]}, True),
        ({"missing": {"$gt": 1}}, False),
    ],
)
def test_filters_compare_as_langgraphs_stores_do(wanted: dict[str, object], expected: bool) -> None:
    value = {"done": True, "priority": 2, "meta": {"lang": "ko", "v": 1}, "tags": ["a", "b"]}

    assert mapping.matches(value, wanted) is expected


def test_an_unknown_filter_operator_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\$regex"):
        mapping.matches({"a": 1}, {"a": {"$regex": "x"}})


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (MatchCondition("prefix", ("users",)), True),
        (MatchCondition("prefix", ("*", "42")), True),
        (MatchCondition("suffix", ("prefs",)), True),
        (MatchCondition("suffix", ("42",)), False),
        (MatchCondition("prefix", ("users", "42", "prefs", "more")), False),
    ],
)
def test_namespace_conditions_match_by_prefix_or_suffix_with_wildcards(
    condition: MatchCondition, expected: bool
) -> None:
    assert mapping.namespace_matches(("users", "42", "prefs"), condition) is expected


def test_a_namespace_is_a_scope_and_the_registry_reads_it_back() -> None:
    scope = mapping.scope_of(("users", "지훈"))
    registry = [
        stored(mapping.registry_fact(("users", "지훈"))),
        stored(mapping.registry_fact(("users", "지훈"))),
    ]

    assert scope == {"langgraph_namespace": "users.지훈"}
    assert mapping.registered(registry) == {("users", "지훈")}


def test_a_namespace_longer_than_a_scope_value_is_refused() -> None:
    with pytest.raises(ValueError, match="256"):
        mapping.scope_of(("x" * 200, "y" * 60))
