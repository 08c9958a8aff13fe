"""The registry of readings (``ktop/model/signals.py``): each reading defined once, and what
derives from it (history, charts, grading) picks up a new entry by itself.

``etcd.reclaimable_bytes`` is the worked example of docs/architecture.md: one entry and
one extractor, and its history, backfill query and docs row follow. Its value is checked
against a real etcd's metrics read with ``prometheus_client``'s own parser.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.model.cluster import ClusterModel
from ktop.model.events import Area, Component, MetricsScraped, Target
from ktop.model.exposition import parse_exposition
from ktop.model.grading import Severity
from ktop.model.reading import key
from ktop.model.signals import BY_METRIC, SIGNALS, area_charts, read_signals
from ktop.model.values import Val
from ktop.model.wanted import FAMILIES
from ktop.ui.render.trend import AREA_CHARTS

FIXTURES = Path(__file__).parents[1] / "fixtures"
ETCD_FIXTURES = ["nri-k8s-1.35_etcd_metrics.prom", "qubership_etcd-3.4.3_follower_metrics.prom"]
"""A freshly compacted 3.6 member (nothing to reclaim) and a fragmented 3.4 follower."""


def test_every_reading_is_defined_once_with_what_derives_from_it() -> None:
    ids = [r.metric for r in SIGNALS]
    assert len(ids) == len(set(ids))
    for r in SIGNALS:
        assert r.extract is not None, r.metric
        assert r.area is not None, r.metric
        assert r.metric.split(".")[0] in {"apf", "api", "etcd", "sched", "nodes"}
    for area in Area:
        ranks = [r.chart.rank for r in area_charts(area) if r.chart is not None]
        assert len(ranks) == len(set(ranks)), area


def test_the_charts_of_every_area_are_the_registry_s() -> None:
    for area, charts in AREA_CHARTS.items():
        assert [c.metric for c in charts] == [r.metric for r in area_charts(area)]
        for c in charts:
            reading = BY_METRIC[c.metric]
            assert reading.chart is not None and reading.area is area
            assert (c.combine, c.title) == (reading.chart.combine, reading.chart.title)


def test_a_reading_grades_by_its_threshold_and_unknown_is_never_ok() -> None:
    fsync = BY_METRIC["etcd.fsync_p99_s"]
    assert fsync.threshold is not None
    assert fsync.status(Val.of(0.002)) is Severity.OK
    assert fsync.status(Val.of(0.6)) is Severity.WARNING  # etcd mixin: > 0.5 s
    assert fsync.status(Val.of(1.5)) is Severity.CRITICAL  # > 1 s
    assert fsync.status(Val.unknown("scrape failed")) is Severity.UNKNOWN
    context = BY_METRIC["etcd.db_size_bytes"]  # no threshold: context
    assert context.status(Val.of(1e9)) is Severity.OK
    assert context.status(Val.unknown("x")) is Severity.UNKNOWN


def _string_literals(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def test_the_ui_names_readings_by_their_handles_never_by_string() -> None:
    ui = Path(__file__).parents[2] / "ktop/ui"
    modules = sorted(ui.rglob("*.py"))
    assert len(modules) > 20
    ids = set(BY_METRIC)
    by_string = {str(p.relative_to(ui)): sorted(_string_literals(p) & ids) for p in modules}
    assert {p: found for p, found in by_string.items() if found} == {}


def _independent_reclaimable(text: str) -> float:
    """db size minus db in use, read with prometheus_client's parser."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = sample.value
    size = values["etcd_mvcc_db_total_size_in_bytes"]
    in_use = values["etcd_mvcc_db_total_size_in_use_in_bytes"]
    return size - in_use


@pytest.mark.parametrize("fixture", ETCD_FIXTURES)
def test_the_worked_example_reads_a_real_etcd_as_its_own_parser_does(fixture: str) -> None:
    text = (FIXTURES / fixture).read_text()
    parsed = parse_exposition(text, FAMILIES[Component.ETCD])
    model = ClusterModel()
    model.apply_all([MetricsScraped(100.0, Target(Component.ETCD, "etcd-0:2379"), parsed.samples)])
    signals = read_signals(model.snapshot())
    got = signals[key("etcd.reclaimable_bytes", "etcd-0:2379")]
    want = _independent_reclaimable(text)
    assert want >= 0
    assert got == want
    reading = BY_METRIC["etcd.reclaimable_bytes"]
    assert reading.promql and "etcd_mvcc_db_total_size_in_use_in_bytes" in reading.promql
    docs = (Path(__file__).parents[2] / "docs/panes.md").read_text()
    assert "`etcd.reclaimable_bytes`" in docs


def _independent_slow_applies(text: str) -> float:
    """``etcd_server_slow_apply_total``, read with prometheus_client's parser."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "etcd_server_slow_apply_total":
                return sample.value
    raise AssertionError("no etcd_server_slow_apply_total")


@pytest.mark.parametrize("fixture", ETCD_FIXTURES)
def test_the_per_member_example_rates_a_real_etcd_s_slow_applies(fixture: str) -> None:
    """``etcd.slow_applies_per_s`` (docs/architecture.md's per-member example): two scrapes
    of a real member 30 s apart, the second with 6 more slow applies, give 0.2/s.
    """
    text = (FIXTURES / fixture).read_text()
    total = _independent_slow_applies(text)
    later = text.replace(
        f"etcd_server_slow_apply_total {total:g}", f"etcd_server_slow_apply_total {total + 6:g}"
    )
    assert _independent_slow_applies(later) == total + 6
    target = Target(Component.ETCD, "etcd-0:2379")
    model = ClusterModel()
    for at, body in ((100.0, text), (130.0, later)):
        parsed = parse_exposition(body, FAMILIES[Component.ETCD])
        model.apply_all([MetricsScraped(at, target, parsed.samples)])
    signals = read_signals(model.snapshot())
    assert signals[key("etcd.slow_applies_per_s", "etcd-0:2379")] == pytest.approx(6 / 30)
