"""The model's numbers from real metric dumps, checked against an independent computation.

The independent side parses with ``prometheus_client``'s own parser and
computes quantiles with a separately written interpolation; the model side
goes the whole way ktop goes: filtered parse, events, model, snapshot.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Target
from ktop.model.exposition import parse_exposition
from ktop.model.wanted import FAMILIES

FIXTURES = Path(__file__).parent.parent / "fixtures"
AT = 1_000.0


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


@functools.cache
def _all_samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[s.name].append((dict(s.labels), float(s.value)))
    return out


def _samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    return _all_samples(text).get(name, [])


def _independent_quantile(q: float, buckets: dict[float, float]) -> float:
    """Walk the buckets by hand: the first bucket reaching the rank, linear inside it."""
    bounds = sorted(buckets)
    total = buckets[math.inf]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for b in bounds:
        if buckets[b] >= rank:
            if b == math.inf:
                return lower_bound
            return lower_bound + (b - lower_bound) * (rank - lower_count) / (
                buckets[b] - lower_count
            )
        lower_bound, lower_count = b, buckets[b]
    raise AssertionError("unreachable")


def _model(component: Component, fixture: str) -> ClusterModel:
    text = _text(fixture)
    parsed = parse_exposition(text, FAMILIES[component])
    assert parsed.errors == ()
    m = ClusterModel()
    m.apply(MetricsScraped(AT, Target(component, "i0"), parsed.samples))
    return m


def _hist(text: str, name: str, **match: str) -> dict[float, float]:
    buckets: dict[float, float] = defaultdict(float)
    for labels, v in _samples(text, name + "_bucket"):
        if all(labels.get(k) == want for k, want in match.items()):
            buckets[float(labels["le"])] += v
    return dict(buckets)


@pytest.mark.parametrize(
    "fixture", ["nri-k8s-1.35_etcd_metrics.prom", "qubership_etcd-3.4.3_follower_metrics.prom"]
)
def test_etcd_member_matches_independent_reading(fixture: str) -> None:
    text = _text(fixture)
    row = _model(Component.ETCD, fixture).snapshot().etcd.members[0]
    gauge = {
        n: _samples(text, n)[0][1]
        for n in (
            "etcd_server_is_leader",
            "etcd_server_has_leader",
            "etcd_server_quota_backend_bytes",
            "etcd_server_proposals_pending",
        )
    }
    assert row.is_leader.value == gauge["etcd_server_is_leader"]
    assert row.has_leader.value == gauge["etcd_server_has_leader"]
    assert row.quota_bytes.value == gauge["etcd_server_quota_backend_bytes"]
    assert row.proposals_pending.value == gauge["etcd_server_proposals_pending"]
    db = _samples(text, "etcd_mvcc_db_total_size_in_bytes") or _samples(
        text, "etcd_debugging_mvcc_db_total_size_in_bytes"
    )
    assert row.db_size_bytes.value == db[0][1]
    for q, val in ((0.5, row.wal_fsync_p50_s), (0.99, row.wal_fsync_p99_s)):
        expected = _independent_quantile(q, _hist(text, "etcd_disk_wal_fsync_duration_seconds"))
        assert val.lifetime  # a single scrape: lifetime buckets, and it says so
        assert val.value == pytest.approx(expected)
    commit = _independent_quantile(0.99, _hist(text, "etcd_disk_backend_commit_duration_seconds"))
    assert row.backend_commit_p99_s.value == pytest.approx(commit)


def test_apiserver_row_matches_independent_reading() -> None:
    fixture = "nri-k8s-1.35_kube-apiserver_metrics.prom"
    text = _text(fixture)
    snap = _model(Component.APISERVER, fixture).snapshot()
    row = snap.apiservers.instances[0]
    watches = sum(
        v for lb, v in _samples(text, "apiserver_longrunning_requests") if lb.get("verb") == "WATCH"
    )
    assert row.watches.value == watches
    inflight = {
        lb["request_kind"]: v for lb, v in _samples(text, "apiserver_current_inflight_requests")
    }
    assert row.inflight_readonly.value == inflight["readOnly"]
    assert row.inflight_mutating.value == inflight["mutating"]
    assert row.rss_bytes.value == _samples(text, "process_resident_memory_bytes")[0][1]
    assert row.version == _samples(text, "kubernetes_build_info")[0][0]["git_version"]
    # APF: every priority level's seat limit equals the independent reading.
    limits = {
        lb["priority_level"]: v
        for lb, v in _samples(text, "apiserver_flowcontrol_current_limit_seats")
    }
    assert {r.priority_level: r.seats_limit.value for r in snap.apf.levels} == limits
    executing: dict[str, float] = defaultdict(float)
    for lb, v in _samples(text, "apiserver_flowcontrol_current_executing_seats"):
        executing[lb["priority_level"]] += v
    for r in snap.apf.levels:
        assert r.seats_in_use.value == executing.get(r.priority_level, 0.0)
    # p99 wait of one level from its lifetime buckets.
    level = snap.apf.levels[0].priority_level
    expected = _independent_quantile(
        0.99,
        _hist(text, "apiserver_flowcontrol_request_wait_duration_seconds", priority_level=level),
    )
    assert snap.apf.levels[0].wait_p99_s.value == pytest.approx(expected)


def test_scheduler_queues_match_independent_reading() -> None:
    fixture = "nri-k8s-1.35_kube-scheduler_metrics.prom"
    text = _text(fixture)
    snap = _model(Component.SCHEDULER, fixture).snapshot()
    for labels, v in _samples(text, "scheduler_pending_pods"):
        if labels["queue"] in snap.scheduler.queue:
            assert snap.scheduler.queue[labels["queue"]].value == v


def test_second_scrape_gives_window_rates() -> None:
    fixture = "nri-k8s-1.35_kube-apiserver_metrics.prom"
    text = _text(fixture)
    parsed = parse_exposition(text, FAMILIES[Component.APISERVER])
    bumped = tuple(
        s.__class__(
            s.name, s.labels, s.value + (30.0 if s.name == "apiserver_request_total" else 0)
        )
        for s in parsed.samples
    )
    m = ClusterModel()
    target = Target(Component.APISERVER, "i0")
    m.apply(MetricsScraped(AT, target, parsed.samples))
    m.apply(MetricsScraped(AT + 10, target, bumped))
    n_series = len(
        {(lb.get("verb"), lb.get("code")) for lb, _ in _samples(text, "apiserver_request_total")}
    )
    # Every kept (verb, code) series grew by 30 x the number of raw series folded into it.
    raw_series = len(_samples(text, "apiserver_request_total"))
    row = m.snapshot().apiservers.instances[0]
    assert n_series < raw_series
    assert row.requests_per_s.value == pytest.approx(raw_series * 30 / 10)
