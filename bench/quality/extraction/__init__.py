"""The labelled extraction set and its per-field scoring (bench/quality/extraction_quality.py)."""
