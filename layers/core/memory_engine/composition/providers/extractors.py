"""Builders of the built-in extractors (rules over the engine's own analyzer; no model)."""

from __future__ import annotations

from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.extraction.fact_extractor import BuiltinFactExtractor
from memory_engine.settings import ExtractionSettings


def builtin(settings: ExtractionSettings) -> BuiltinExtractor:
    return BuiltinExtractor()


def builtin_facts(settings: ExtractionSettings) -> BuiltinFactExtractor:
    return BuiltinFactExtractor()
