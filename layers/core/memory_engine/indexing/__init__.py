"""Indexing: how memories and turns become search-index documents (`documents`), the passage
vectors of buffered turns (`turn_vectors`), and bringing an index back in line with the store
(`sync`). Used by the extract, retrieve, fork and reembed use cases and by the wiring."""
