"""Extraction: turning a batch of consecutive turns into one memory's fields.

`builtin` is the extractive extractor used when no LLM is configured; its helpers
(`sentences`, `lexicon`, `keywords`, `names`, `characters`, `cues`, `setting`) are pure
functions over text, one job each.
"""
