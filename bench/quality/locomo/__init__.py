"""LoCoMo retrieval benchmark: data, metrics, the engine's run, baselines, report and plot.

The entry point is `python -m bench.quality.locomo_retrieval`; the protocol is docs/evaluation.md.
"""
