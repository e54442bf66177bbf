"""Benchmarks: each prints a table and saves JSON under bench/results/."""
