"""Benchmarks: `make bench` (see bench/run.py)."""
