"""Which metric families are counters (``ktop/model/wanted.py``): known from their names, so
that a family a reading takes the rate of has its resets handled with no second table.

The expected kinds are read independently: from the ``# TYPE`` lines of the real
expositions in ``tests/fixtures/`` and from the families each reading's PromQL rates.
"""

from __future__ import annotations

import re
from pathlib import Path

from ktop.model.series import counts
from ktop.model.signals import SIGNALS
from ktop.model.wanted import COUNTERS, FAMILIES, HISTOGRAMS

FIXTURES = Path(__file__).parents[1] / "fixtures"
READ = {family for families in FAMILIES.values() for family in families}
RATED = re.compile(r"rate\((\w+)\{")


def _fixture_types() -> dict[str, str]:
    types: dict[str, str] = {}
    for path in sorted(FIXTURES.glob("*.prom")):
        for line in path.read_text().splitlines():
            if line.startswith("# TYPE "):
                _, _, family, kind = line.split()
                types[family] = kind
    return types


def test_every_family_a_reading_rates_is_a_counter_or_a_histogram() -> None:
    rated: set[str] = set()
    for reading in SIGNALS:
        rated.update(RATED.findall(reading.promql))
    buckets = {f for f in rated if f.endswith("_bucket")}
    assert {f.removesuffix("_bucket") for f in buckets} <= HISTOGRAMS
    counters = rated - buckets
    assert counters, "no reading rates a counter: the pattern no longer matches the PromQL"
    assert counters <= COUNTERS
    assert counters <= READ
    assert all(counts(f) for f in counters)


def test_the_families_real_expositions_type_as_counters_are_the_counters() -> None:
    types = _fixture_types()
    typed = READ & types.keys()
    assert len(typed) > 30  # most families ktop reads are in the fixtures
    assert {f for f in typed if types[f] == "counter"} == COUNTERS & typed
    assert {f for f in typed if types[f] == "histogram"} == HISTOGRAMS & typed
    assert COUNTERS <= READ
