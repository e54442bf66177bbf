"""Alias merging: one canonical name per character, stable across a thread's batches."""

from __future__ import annotations

from memory_engine.extraction.characters import resolve_names


def test_a_title_a_full_name_and_its_parts_merge_into_one_character() -> None:
    # Given four ways of calling the same captain
    names = ["Captain Mira Holt", "Mira", "Holt", "Captain Holt"]

    # When they are resolved
    resolved = resolve_names(names)

    # Then one character remains, named by the longest name without title
    assert resolved == dict.fromkeys(names, "Mira Holt")


def test_the_order_names_arrive_in_does_not_change_the_canonical_name() -> None:
    # Given the short names first and the full name last
    names = ["Holt", "Mira", "Captain Mira Holt"]

    # When they are resolved
    resolved = resolve_names(names)

    # Then every name maps to the full name
    assert set(resolved.values()) == {"Mira Holt"}


def test_known_characters_map_a_new_alias_to_the_earlier_canonical_name() -> None:
    # Given a thread that knows "Mira" and a batch naming "Captain Mira Holt"
    known = {"Mira": ["Captain Mira"]}

    # When the new names are resolved against the known ones
    resolved = resolve_names(["Captain Mira Holt", "Holt"], known)

    # Then the known canonical name stays, and the new names join it
    assert resolved == {"Captain Mira Holt": "Mira", "Holt": "Mira"}


def test_two_people_sharing_no_words_stay_separate() -> None:
    # Given two unrelated names
    names = ["Mira Holt", "Jonas Park"]

    # When they are resolved
    resolved = resolve_names(names)

    # Then both remain, each its own name
    assert resolved == {"Mira Holt": "Mira Holt", "Jonas Park": "Jonas Park"}


def test_a_short_name_fitting_two_characters_stays_on_its_own() -> None:
    # Given two Miras and a bare "Mira"
    names = ["Mira Holt", "Mira Stone", "Mira"]

    # When they are resolved
    resolved = resolve_names(names)

    # Then the bare name is not guessed into either
    assert resolved == {"Mira Holt": "Mira Holt", "Mira Stone": "Mira Stone", "Mira": "Mira"}


def test_names_differing_only_in_case_are_one_character() -> None:
    # Given the same name typed in two cases
    names = ["mira holt", "Mira Holt"]

    # When they are resolved
    resolved = resolve_names(names)

    # Then one character remains, first spelling kept
    assert resolved == {"mira holt": "mira holt", "Mira Holt": "mira holt"}


def test_a_nickname_joins_the_full_name() -> None:
    # Given a speaker and the short name others call her by
    names = ["Melanie", "Mel"]

    # When they are resolved
    resolved = resolve_names(names)

    # Then the nickname maps to the full name
    assert resolved["Mel"] == "Melanie"


def test_a_korean_given_name_joins_the_full_name() -> None:
    # Given a full Korean name and the given name alone
    names = ["철수", "김철수"]

    # When they are resolved
    resolved = resolve_names(names)

    # Then the given name maps to the full name
    assert resolved == {"철수": "김철수", "김철수": "김철수"}
