"""Extraction: turning a batch of consecutive turns into one memory's fields.

`batching` decides when buffered turns make a job and how they are cut into batches. `builtin` is
the extractive extractor used when no LLM is configured; its helpers (`sentences`, `lexicon`,
`keywords`, `names`, `characters`, `cues`, `scene`) are pure functions over text, one job each.
"""
