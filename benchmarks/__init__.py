"""Reproducible benchmarks (``make bench``); results in RESULTS.md."""
