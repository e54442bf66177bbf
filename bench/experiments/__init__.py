"""One-off experiments and estimates cited by the docs: run by hand, not part of `make bench`."""
