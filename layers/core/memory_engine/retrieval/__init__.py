"""Retrieval: lexical analysis, BM25, candidate scoring and fusion — pure functions over data.

Nothing here does I/O or imports numpy; adapters and use cases feed it tokens, scores and records.
"""
