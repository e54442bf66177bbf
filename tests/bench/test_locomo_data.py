"""Reading LoCoMo files: gold cleaning and session dates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.quality.locomo.data import clean_evidence, parse_date


def test_evidence_is_split_normalised_and_filtered() -> None:
    # Given LoCoMo's irregular evidence strings and the ids that exist
    known = {"D8:6", "D9:17", "D30:5", "D11:26"}
    evidence = ["D8:6; D9:17", "D30:05", "D:11:26", "D", "D99:1"]

    # Then each is split, zero-padding and stray colons are dropped, unknown ids removed
    assert clean_evidence(evidence, known) == ["D8:6", "D9:17", "D30:5", "D11:26"]


def test_repeated_evidence_counts_once() -> None:
    assert clean_evidence(["D1:2", "D1:02"], {"D1:2"}) == ["D1:2"]


def test_session_dates_are_read_as_utc() -> None:
    assert parse_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_date("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9, tzinfo=UTC)


def test_an_unreadable_date_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="yesterday"):
        parse_date("yesterday")
