"""Quality benchmarks: retrieval (LoCoMo, the Korean set) and extraction, scored against labelled data."""
