"""The scale benchmark: ktop, kubectl and k9s against one real apiserver.

Run ``python -m benchmarks.scale --help`` (or ``make bench``); method and
figures are in docs/benchmarks.md and docs/cost.md.
"""
