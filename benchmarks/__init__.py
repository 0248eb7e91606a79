"""Benchmarks: AWS API calls and wall time of the project against the reference design.

Run ``python -m benchmarks.bench_sync --help``; ``benchmarks/README.md`` explains the numbers.
"""
