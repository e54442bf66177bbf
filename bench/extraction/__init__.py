"""The labelled extraction set and its per-field scoring (bench/extraction_quality.py)."""
