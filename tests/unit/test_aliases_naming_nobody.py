"""Issue #34 §1: aliases that name nobody never link two characters in the thread's registry."""

from __future__ import annotations

import pytest

from memory_engine.extraction.registry import canonical_index, names_nobody, update_registry

SEVEN = ["Maya", "Leo", "Ana", "Sam", "Lily", "Tom", "Nora"]


def test_seven_characters_all_given_the_alias_none_stay_seven_characters() -> None:
    # Given the model's answer of the issue: every character with the alias "none"
    found = {name: ["none"] for name in SEVEN}

    # When the batch is merged into an empty registry
    registry = update_registry({}, found)

    # Then each character keeps its own entry and "none" is nobody's alias
    assert registry == {name: [] for name in SEVEN}


@pytest.mark.parametrize(
    "junk", ["none", "None", "N/A", "n/a", "없음", "-", "", "  ", "null", "unknown", "—"]
)
def test_an_alias_that_names_nobody_never_merges_two_known_characters(junk: str) -> None:
    # Given a registry that already holds Maya with that non-alias
    registry = {"Maya": [junk]}

    # When another character arrives with the same non-alias
    updated = update_registry(registry, {"Leo": [junk]})

    # Then Leo is a character of his own, and neither keeps the non-alias
    assert updated == {"Maya": [], "Leo": []}


def test_a_character_listing_its_own_name_as_alias_links_nobody_else() -> None:
    # Given two characters whose alias is their own name
    registry = update_registry({}, {"Maya": ["Maya"], "Leo": ["leo"]})

    # Then they stay apart with no alias
    assert registry == {"Maya": [], "Leo": []}


def test_a_real_shared_alias_still_merges_the_entries() -> None:
    # Given two entries and a batch showing that "Mel" names both
    registry = {"Melanie": ["Mel"], "Mrs. Smith": []}

    # When the batch links them through a real alias, beside a non-alias
    updated = update_registry(registry, {"Mel": ["Mrs. Smith", "none"]})

    # Then they merge as before, without the non-alias
    assert updated == {"Melanie": ["Mel", "Mrs. Smith"]}


def test_the_canonical_index_never_maps_a_non_alias_to_anyone() -> None:
    # Given a registry written before the fix, with "none" stored as an alias
    index = canonical_index({"Maya": ["none", "May"]})

    # Then "none" resolves to nobody, "May" to Maya
    assert "none" not in index
    assert index["may"] == "Maya"


@pytest.mark.parametrize(
    ("name", "nobody"), [("none", True), ("해당 없음", True), ("(none)", True), ("Nona", False)]
)
def test_which_names_name_nobody(name: str, nobody: bool) -> None:
    assert names_nobody(name) is nobody
