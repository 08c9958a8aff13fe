"""Windowed series math: rates, resets, windows, quantiles over increases."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from ktop.model.events import LOAD_BALANCED, Component, Sample, Target
from ktop.model.series import TargetSeries
from ktop.model.series_window import NEEDS_TWO, SWITCHED

ETCD = Target(Component.ETCD, "e0")
API = Target(Component.APISERVER, "a0")


REQS = "apiserver_request_total"


def _counter(v: float) -> list[Sample]:
    return [Sample("etcd_server_proposals_failed_total", (), v)]


def test_rate_needs_two_scrapes() -> None:
    ts = TargetSeries(ETCD, 300)
    ts.ingest(0, _counter(5))
    r = ts.rate("etcd_server_proposals_failed_total")
    assert not r.known and r.reason == NEEDS_TWO


def test_rate_survives_counter_reset() -> None:
    ts = TargetSeries(ETCD, 300)
    for t, v in [(0, 100), (5, 150), (10, 20), (15, 60)]:
        ts.ingest(t, _counter(v))
    # 50 before the reset, 20 counted since the reset, then 40: 110 over 15 s.
    assert ts.increase("etcd_server_proposals_failed_total").value == pytest.approx(110)
    assert ts.rate("etcd_server_proposals_failed_total").value == pytest.approx(110 / 15)


def test_points_older_than_the_window_are_dropped() -> None:
    ts = TargetSeries(ETCD, 10)
    for t, v in [(0, 0), (5, 1000), (10, 1010), (15, 1020)]:
        ts.ingest(t, _counter(v))
    # Only t=5..15 remain: 20 over 10 s.
    assert ts.rate("etcd_server_proposals_failed_total").value == pytest.approx(2.0)


def test_gauge_from_an_earlier_scrape_is_not_current() -> None:
    ts = TargetSeries(ETCD, 300)
    ts.ingest(0, [Sample("etcd_server_proposals_pending", (), 3)])
    ts.ingest(5, [Sample("etcd_server_is_leader", (), 1)])
    assert not ts.gauge("etcd_server_proposals_pending").known
    assert ts.gauge("etcd_server_is_leader").value == 1


def test_labels_outside_the_kept_set_are_summed() -> None:
    ts = TargetSeries(API, 300)

    def scrape(t: float, n: float) -> None:
        ts.ingest(
            t,
            [
                Sample(
                    "apiserver_request_total",
                    (("code", "200"), ("resource", r), ("verb", "LIST")),
                    n,
                )
                for r in ("pods", "nodes", "leases")
            ],
        )

    scrape(0, 10)
    scrape(10, 20)
    assert ts.series_count() == 1
    assert ts.rate("apiserver_request_total", {"verb": "LIST"}).value == pytest.approx(3.0)
    assert ts.rate("apiserver_request_total", {"verb": frozenset({"GET"})}).value == 0.0


def _hist(t: float, counts: Mapping[str, float]) -> list[Sample]:
    return [
        Sample("etcd_disk_wal_fsync_duration_seconds_bucket", (("le", le),), c)
        for le, c in counts.items()
    ]


def test_quantile_uses_the_increase_over_the_window() -> None:
    ts = TargetSeries(ETCD, 300)
    ts.ingest(0, _hist(0, {"0.001": 1000, "0.002": 1000, "0.004": 1000, "+Inf": 1000}))
    lifetime = ts.quantile(0.99, "etcd_disk_wal_fsync_duration_seconds")
    assert lifetime.lifetime and lifetime.value == pytest.approx(0.00099)
    # In the window 100 new observations, all between 2 and 4 ms.
    ts.ingest(5, _hist(5, {"0.001": 1000, "0.002": 1000, "0.004": 1100, "+Inf": 1100}))
    q = ts.quantile(0.5, "etcd_disk_wal_fsync_duration_seconds")
    assert not q.lifetime
    assert q.value == pytest.approx(0.002 + 0.002 * 0.5)


def test_quantile_unknown_without_observations_in_window() -> None:
    ts = TargetSeries(ETCD, 300)
    same = {"0.001": 5, "+Inf": 5}
    ts.ingest(0, _hist(0, same))
    ts.ingest(5, _hist(5, same))
    q = ts.quantile(0.99, "etcd_disk_wal_fsync_duration_seconds")
    assert not q.known and q.empty and "no observations" in q.reason


def test_a_counter_first_seen_after_the_first_scrape_counts_from_zero() -> None:
    # Labelled counters appear at their first increment: a series absent at the previous
    # scrape had counted nothing then (a flood that ends between two scrapes still counts).
    rejected = "apiserver_flowcontrol_rejected_requests_total"
    labels = (("flow_schema", "f"), ("priority_level", "p"), ("reason", "queue-full"))
    other = Sample("apiserver_request_total", (("code", "200"), ("verb", "GET")), 10)
    ts = TargetSeries(API, 300)
    ts.ingest(0, [other])
    ts.ingest(10, [other, Sample(rejected, labels, 50)])
    assert ts.increase(rejected).value == 50
    assert ts.rate(rejected).value == pytest.approx(5.0)
    # a gauge first seen later is not back-filled
    ts.ingest(20, [other, Sample("apiserver_flowcontrol_current_inqueue_requests", labels[:2], 7)])
    assert ts.gauge("apiserver_flowcontrol_current_inqueue_requests").value == 7


def test_a_counter_no_longer_exposed_counted_nothing_in_the_window() -> None:
    """A restarted apiserver exposes no 429 series until it rejects again: the old
    process's series is left with one point in the window, which counts nothing (PromQL's
    rate leaves it out); it is never "needs two scrapes" on a target scraped every 10 s.
    """
    code_200 = (("code", "200"), ("verb", "GET"))
    code_429 = (("code", "429"), ("verb", "LIST"))
    ts = TargetSeries(API, 30)
    for at, total in ((0, 10), (10, 20)):
        ts.ingest(at, [Sample(REQS, code_200, total), Sample(REQS, code_429, 5)])
    for at, total in ((20, 1), (30, 4), (38, 8)):  # restarted: counters from zero, no 429
        ts.ingest(at, [Sample(REQS, code_200, total)])
    # in the window (8, 38]: the 429 series' one point, at 10
    assert ts.rate(REQS, {"code": "429"}).value == 0.0
    assert ts.span_s == 28.0  # the scrapes at 10 ... 38
    # a series seen once at the only scrape of a window is still unknown
    once = TargetSeries(API, 30)
    once.ingest(0, [Sample(REQS, code_429, 5)])
    assert once.rate(REQS, {"code": "429"}).reason == NEEDS_TWO and once.span_s is None


def test_a_counter_of_a_target_scraped_once_stays_lifetime() -> None:
    ts = TargetSeries(ETCD, 300)
    ts.ingest(0, _counter(5))
    assert not ts.rate("etcd_server_proposals_failed_total").known


def _behind_lb(start: float, requests: float) -> list[Sample]:
    labels = (("operation", "get"), ("group", ""), ("resource", "nodes"), ("type", "*v1.Node"))
    return [
        Sample("process_start_time_seconds", (), start),
        Sample("etcd_requests_total", labels, requests),
    ]


def test_no_rate_across_two_processes_behind_a_load_balancer() -> None:
    ts = TargetSeries(Target(Component.APISERVER, LOAD_BALANCED), 300)
    ts.ingest(0, _behind_lb(100, 1000))
    ts.ingest(10, _behind_lb(100, 1010))
    assert ts.rate("etcd_requests_total").value == pytest.approx(10 / 10)
    # Another process answers (start time 200, its own counter at 20): through the load
    # balancer that is another instance, whose counter says nothing about the first's.
    ts.ingest(20, _behind_lb(200, 20))
    for rate in (
        ts.rate("etcd_requests_total"),
        ts.rate_by("etcd_requests_total", ("resource",))[("nodes",)],
    ):
        assert not rate.known and rate.reason == SWITCHED
    # Two scrapes of the same process: the rate of that process alone.
    ts.ingest(30, _behind_lb(200, 40))
    assert ts.rate("etcd_requests_total").value == pytest.approx((40 - 20) / 10)


def test_a_known_instance_that_restarts_is_a_counter_reset() -> None:
    ts = TargetSeries(Target(Component.APISERVER, "10.0.0.1:6443"), 300)
    for at, start, value in [(0, 100, 1000), (10, 100, 1010), (20, 200, 20)]:
        ts.ingest(at, _behind_lb(start, value))
    # 10 before the restart, 20 since: 30 over 20 s.
    assert ts.rate("etcd_requests_total").value == pytest.approx(30 / 20)


def test_an_answer_changed_by_its_caller_does_not_change_the_next_answer() -> None:
    ts = TargetSeries(ETCD, 300)
    ts.ingest(0, _hist(0, {"0.001": 10, "+Inf": 10}))
    ts.ingest(5, _hist(5, {"0.001": 30, "+Inf": 40}))
    first = ts.buckets_by("etcd_disk_wal_fsync_duration_seconds", ())
    first.clear()
    again = ts.buckets_by("etcd_disk_wal_fsync_duration_seconds", ())
    assert again[()].counts == {0.001: 20.0, float("inf"): 30.0}
    rates = ts.rate_by("etcd_disk_wal_fsync_duration_seconds_count", ())
    rates.clear()
    assert ts.rate_by("etcd_disk_wal_fsync_duration_seconds_bucket", ()) != {}
