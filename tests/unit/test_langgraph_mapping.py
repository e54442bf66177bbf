"""How the LangGraph store writes items as memory-bank facts and reads them back (pure functions)."""

from __future__ import annotations

import json

import pytest
from langgraph.store.base import MatchCondition

from memory_engine_client.models import BankMemory
from memory_engine_langgraph import mapping

CREATED = "2026-12-01T10:00:00+00:00"


def stored(fact: str, name: str = "memories/m1", updated: str = "2026-12-02T10:00:00.000000Z") -> BankMemory:
    return BankMemory(name=name, fact=fact, scope={}, createTime=updated, updateTime=updated)


def facts(
    key: str, value: dict[str, object], version: str = "v1", index: list[str] | None = None
) -> list[str]:
    return mapping.record_facts(key, value, CREATED, version, index or [])


def test_an_item_read_back_from_its_record_has_its_key_value_and_times() -> None:
    value = {"text": "지훈은 땅콩 알레르기가 있다.", "tags": ["health"], "level": 2}
    [fact] = facts("diet", value, index=["memories/i1"])

    [version] = mapping.versions([stored(fact)], ("users", "42"))["diet"]

    item = version.item
    assert item is not None and version.index == ["memories/i1"]
    assert (item.key, item.value, item.namespace) == ("diet", value, ("users", "42"))
    assert item.created_at.isoformat() == CREATED
    assert item.updated_at.isoformat() == "2026-12-02T10:00:00+00:00"


def test_a_value_larger_than_a_fact_is_cut_into_parts_that_each_fit() -> None:
    value = {"text": '\u0001 quoted " text ' * 3_000}  # escapes make its JSON longer than its text

    parts = facts("big", value)
    [version] = mapping.versions([stored(f, f"memories/p{n}") for n, f in enumerate(parts)], ("n",))["big"]

    assert len(parts) > 10 and all(len(part) <= mapping.MAX_FACT_CHARS for part in parts)
    assert version.item is not None and version.item.value == value


def test_a_version_missing_a_part_is_not_read_but_kept_for_deletion() -> None:
    parts = facts("big", {"text": "x" * 10_000})
    complete = facts("big", {"text": "old"}, version="v0")

    listed = mapping.versions(
        [stored(f, f"memories/p{n}") for n, f in enumerate(parts[1:])]
        + [stored(complete[0], "memories/old", "2026-12-01T10:00:00.000000Z")],
        ("n",),
    )["big"]

    assert mapping.newest(listed) is not None and mapping.newest(listed).value == {"text": "old"}  # type: ignore[union-attr]
    assert [v.item is None for v in listed] == [False, True]


def test_a_value_past_the_limit_is_refused_naming_its_size() -> None:
    with pytest.raises(ValueError, match=r"is 2000\d\d characters as JSON"):
        facts("huge", {"text": "x" * 200_000})


def test_the_texts_that_find_an_item_are_langgraphs_fields_the_whole_value_by_default() -> None:
    value = {"title": "Cello lessons", "notes": ["Tuesdays", "Room 4"], "n": 3}

    assert mapping.index_texts(value, None) == [json.dumps(value, sort_keys=True, ensure_ascii=False)]
    assert mapping.index_texts(value, ["notes[*]"]) == ["Tuesdays", "Room 4"]
    assert mapping.index_texts(value, []) == []


def test_an_item_stored_whole_by_the_earlier_store_is_still_read() -> None:
    record = json.dumps({"key": "k", "value": {"title": "Cello lessons"}, "created_at": CREATED})
    earlier = f"Cello lessons\n{record}"

    [version] = mapping.versions([stored(earlier)], ("n",))["k"]

    assert version.item is not None and version.item.value == {"title": "Cello lessons"}


def test_a_fact_this_store_did_not_write_is_no_item() -> None:
    assert mapping.versions([stored("The user likes tea.")], ("n",)) == {}


def test_the_newest_version_of_a_key_comes_first() -> None:
    old = stored(facts("k", {"v": 1}, "v1")[0], "memories/a", "2026-12-02T10:00:00.000000Z")
    new = stored(facts("k", {"v": 2}, "v2")[0], "memories/b", "2026-12-03T10:00:00.000000Z")

    versions = mapping.versions([old, new], ("n",))["k"]

    assert [v.item.value for v in versions if v.item] == [{"v": 2}, {"v": 1}]


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
