"""Speed benchmarks: each prints a table and saves bench/results/<name>.json (medians of several runs)."""
