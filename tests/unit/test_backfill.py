"""Backfill conversions (pure): Prometheus API answers to events and history points."""

from __future__ import annotations

import re
from typing import Any

from ktop.model.cluster import ClusterModel, ModelConfig
from ktop.model.events import Component, HistoryBackfilled
from ktop.model.signals import SIGNALS, key
from ktop.sources.live.backfill import (
    matrix_to_events,
    range_to_points,
    signal_query,
    window_selectors,
)
from ktop.sources.live.prometheus import DEFAULT_JOBS

T0 = 1_767_225_600.0


def matrix(
    name: str, instance: str, extra: dict[str, str], values: list[tuple[float, float]]
) -> dict[str, Any]:
    metric = {"__name__": name, "instance": instance, "job": "apiserver", **extra}
    return {"metric": metric, "values": [[t, str(v)] for t, v in values]}


def test_raw_window_samples_become_one_scrape_per_instance_and_time() -> None:
    results = [
        matrix(
            "apiserver_request_total",
            "a:6443",
            {"verb": "GET", "code": "200"},
            [(T0, 100), (T0 + 15, 160), (T0 + 30, 220)],
        ),
        matrix(
            "apiserver_request_total",
            "a:6443",
            {"verb": "GET", "code": "404"},
            [(T0, 10), (T0 + 15, 10), (T0 + 30, 40)],
        ),
        matrix(
            "apiserver_request_total",
            "b:6443",
            {"verb": "GET", "code": "200"},
            [(T0 + 5, 1), (T0 + 20, 2)],
        ),
    ]
    events = matrix_to_events(Component.APISERVER, results)
    assert [(e.at, e.target.instance, len(e.samples)) for e in events] == [
        (T0, "a:6443", 2),
        (T0 + 5, "b:6443", 1),
        (T0 + 15, "a:6443", 2),
        (T0 + 20, "b:6443", 1),
        (T0 + 30, "a:6443", 2),
    ]
    # Folded by the model, the window's rate is (220 + 40 - 100 - 10) / 30 s.
    model = ClusterModel(ModelConfig(window_s=60))
    model.apply_all(events)
    rows = {r.instance: r for r in model.snapshot().apiservers.instances}
    assert rows["a:6443"].requests_per_s.value == (260 - 110) / 30
    assert rows["b:6443"].requests_per_s.value == 1 / 15


def test_range_results_become_points_per_signal_key() -> None:
    spec = next(s for s in SIGNALS if s.metric == "apf.rejected_per_s")
    results = [
        {"metric": {"priority_level": "workload-low"}, "values": [[T0, "1.5"], [T0 + 15, "NaN"]]},
        {"metric": {"priority_level": "exempt"}, "values": [[T0, "0"]]},
    ]
    got = range_to_points(spec, results)
    assert got == {
        key("apf.rejected_per_s", "workload-low"): ((T0, 1.5),),
        key("apf.rejected_per_s", "exempt"): ((T0, 0.0),),
    }


def test_every_prometheus_signal_formats_to_promql_with_the_window() -> None:
    for spec in SIGNALS:
        q = signal_query(spec, DEFAULT_JOBS, 300)
        if spec.component is None:
            assert q is None
            continue
        assert q is not None and "{job}" not in q and "{w}" not in q
        assert q.count("(") == q.count(")")
        assert 'job=~"' in q
        if "rate(" in q:
            assert "[300s]" in q
        if "histogram_quantile" in q:
            assert re.search(r"sum by \(\w+, le\) \(rate\(\w+_bucket\{", q)
        if spec.subject_label:
            assert f"by ({spec.subject_label}" in q


def test_window_selectors_read_buckets_of_histograms() -> None:
    assert window_selectors("etcd_disk_wal_fsync_duration_seconds", ".*etcd.*", 300) == [
        'etcd_disk_wal_fsync_duration_seconds_bucket{job=~".*etcd.*"}[300s]'
    ]


def test_backfilled_history_reaches_the_snapshot() -> None:
    model = ClusterModel()
    k = key("api.requests_per_s", "a:6443")
    model.apply(HistoryBackfilled(T0, ((k, ((T0 - 60, 5.0), (T0 - 45, 6.0))),)))
    assert model.snapshot().history.points(k) == ((T0 - 60, 5.0), (T0 - 45, 6.0))
