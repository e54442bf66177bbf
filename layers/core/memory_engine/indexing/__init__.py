"""Indexing: how memories and turns become search-index documents (`documents`) and bringing an
index back in line with the store (`sync`). Used by the extract, retrieve, fork and reembed use
cases and by the composition; the passage vectors of buffered turns are `usecases.turn_vectors`."""
