"""Benchmarks of ktop (kept out of the default test run)."""
