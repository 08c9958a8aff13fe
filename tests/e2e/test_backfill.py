"""Backfill from the lab's real Prometheus: the first frame equals Prometheus' own math.

ktop folds the raw samples Prometheus returns for the window (one scrape per
step of each target: the lab scrapes every few seconds) and computes
rates and quantiles with its own code; Prometheus computes ``rate`` and
``histogram_quantile`` over the same window at the same instant. The two
must agree, and the history's backfilled signals (PromQL range queries)
must end on the same numbers.
"""

from __future__ import annotations

import math
import time
import urllib.parse
from collections import Counter
from typing import Any

import pytest
from prometheus_api_client import PrometheusConnect

from ktop.lab import Lab
from ktop.lab.util import http_json
from ktop.model.area_apiservers import WRITE_VERBS
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, Event, MetricsScraped, SloDayCounted
from ktop.model.model_inputs import ModelConfig
from ktop.model.reading import key
from ktop.model.slo import QUANTILE, SLI_FAMILIES, SLOS
from ktop.model.values import Val
from ktop.sources.live.backfill import PrometheusBackfill
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_queries import day_start
from tests.e2e.cadence import cycles, deadline, lab_cadence, prometheus_first_s
from tests.e2e.helpers import poll
from tests.e2e.live import account, live, options

WINDOW_S = 30.0
ONE_POLL_S = 30.0
"""The live source's Prometheus interval here: the frame that shows etcd is the first poll's."""


def two_windows_s(lab: Lab) -> float:
    """Until the lab's Prometheus holds two windows: a scrape per interval for that long."""
    scrape = lab_cadence(lab).scrape_s
    return deadline(cycles(2 * WINDOW_S / scrape, scrape))


def prom_at(url: str, query: str, at: float, label: str) -> dict[str, float]:
    """An instant query evaluated at ``at``, keyed by ``label``."""
    qs = urllib.parse.urlencode({"query": query, "time": f"{at:.3f}"})
    data: dict[str, Any] = http_json(f"{url}/api/v1/query?{qs}")
    assert data.get("status") == "success", data
    return {r["metric"].get(label, ""): float(r["value"][1]) for r in data["data"]["result"]}


def history_span(url: str) -> float | None:
    """How many apiserver scrapes Prometheus holds over two windows."""
    got = prom_at(
        url, f'count_over_time(up{{job="apiserver"}}[{2 * WINDOW_S:.0f}s])', time.time(), "instance"
    )
    return min(got.values()) if got else None


def wait_for_two_windows(lab: Lab, url: str) -> None:
    """Until Prometheus holds two windows of every apiserver: as many scrapes as the lab's
    scrape interval fits in them, less one (the range's edge may fall just after a scrape)."""
    wanted = 2 * WINDOW_S / lab_cadence(lab).scrape_s - 1
    poll(
        lambda: ((n := history_span(url)) is not None and n >= wanted) or None,
        timeout_s=two_windows_s(lab),
        what=f"{2 * WINDOW_S:.0f}s of samples ({wanted:.0f} scrapes of each apiserver)",
    )


def sli_family_exposed(url: str, at: float) -> str:
    """The SLI histogram the lab's apiservers expose (the first of ktop's preference order
    that Prometheus holds), as ktop picks it."""
    for name in SLI_FAMILIES:
        if prom_at(url, f'count({name}_bucket{{job="apiserver"}})', at, ""):
            return name
    raise AssertionError("no apiserver latency histogram in Prometheus")


def assert_same_quantile(ktop: Val, prom: float, what: str) -> None:
    """Equal numbers, or both say there was nothing observed (Prometheus: NaN)."""
    if math.isnan(prom):
        assert ktop.value is None and ktop.empty, what
    else:
        assert ktop.value == pytest.approx(prom, rel=1e-6), what
        assert not ktop.lifetime, what


@pytest.fixture
def prom_url(lab: Lab) -> str:
    url = lab.info["prometheus_url"]
    assert url, "the lab runs without Prometheus"
    return str(url)


def test_first_frame_equals_prometheus_rate_and_histogram_quantile(lab: Lab, prom_url: str) -> None:
    # Prometheus must hold two windows of scrapes, so that no
    # counter in the window started from zero (where PromQL clamps its extrapolation).
    wait_for_two_windows(lab, prom_url)
    at = float(int(time.time()) - 2)
    # the history's rate window as the frame's (the dashboard's): its last point is the frame's
    backfill = PrometheusBackfill(
        prom_url, time.time, window_s=WINDOW_S, signal_window_s=WINDOW_S, history_s=300, step_s=5
    )
    events = backfill.read(PrometheusConnect(url=prom_url), at)
    assert not backfill.errors
    scrapes = [e for e in events if isinstance(e, MetricsScraped)]
    # The lab scrapes more often than the step: the window comes back thinned to one scrape per step
    # of each target (the last one and both sides of a reset kept as well).
    per_target = Counter(e.target for e in scrapes)
    steps = WINDOW_S / backfill.step_s
    assert max(per_target.values()) >= steps, per_target
    assert all(n <= steps + 4 for n in per_target.values()), per_target

    model = ClusterModel(ModelConfig(window_s=WINDOW_S))
    model.apply_all(events)
    first = model.snapshot()
    w = f"{WINDOW_S:.0f}s"

    # Rates: a single counter per instance, and a counter summed over many series.
    cpu = prom_at(
        prom_url,
        f'sum by (instance) (rate(process_cpu_seconds_total{{job="apiserver"}}[{w}]))',
        at,
        "instance",
    )
    reqs = prom_at(
        prom_url,
        f'sum by (instance) (rate(apiserver_request_total{{job="apiserver"}}[{w}]))',
        at,
        "instance",
    )
    rows = {r.instance: r for r in first.apiservers.instances}
    assert set(rows) == set(cpu) and cpu
    for inst, row in rows.items():
        assert row.cpu_cores.value == pytest.approx(cpu[inst], rel=1e-6), inst
        assert row.requests_per_s.value == pytest.approx(reqs[inst], rel=1e-6), inst
        assert not row.requests_per_s.lifetime

    # Windowed quantiles: histogram_quantile on the buckets' rates summed by instance.
    writes = prom_at(
        prom_url,
        "histogram_quantile(0.99, sum by (instance, le) (rate(apiserver_request_duration_seconds_"
        f'bucket{{job="apiserver",verb=~"{"|".join(sorted(WRITE_VERBS))}"}}[{w}])))',
        at,
        "instance",
    )
    for inst, row in rows.items():
        assert_same_quantile(row.write_p99_s, writes[inst], f"write p99 {inst}")
    assert any(not math.isnan(v) for v in writes.values()), "writes were observed"
    # The API call SLOs (issue item: checked against Prometheus' histogram_quantile over the
    # same window): each kind's p99 from the SLI histogram, its calls matched as the SLO says.
    family = sli_family_exposed(prom_url, at)
    for slo in SLOS:
        scope = "" if slo.scope is None else f',scope="{slo.scope}"'
        verbs = "|".join(sorted(slo.verbs))
        p99 = prom_at(
            prom_url,
            f"histogram_quantile({QUANTILE}, sum by (instance, le) (rate({family}_bucket"
            f'{{job="apiserver",verb=~"{verbs}"{scope}}}[{w}])))',
            at,
            "instance",
        )
        for inst, row in rows.items():
            got = next(s for s in row.slos if s.kind == slo.kind)
            if inst in p99:
                assert_same_quantile(got.p99_s, p99[inst], f"{slo.kind} p99 {inst}")
            else:  # Prometheus has no such calls in the window: ktop says none either
                assert got.p99_s.value is None, f"{slo.kind} p99 {inst}"
        if slo.kind == SLOS[0].kind:
            assert any(not math.isnan(v) for v in p99.values()), "mutating calls were observed"
    commit = prom_at(
        prom_url,
        "histogram_quantile(0.99, sum by (instance, le) "
        f'(rate(etcd_disk_backend_commit_duration_seconds_bucket{{job="etcd"}}[{w}])))',
        at,
        "instance",
    )
    members = {m.instance: m for m in first.etcd.members}
    assert set(members) == set(commit) and commit
    for inst, m in members.items():
        assert_same_quantile(m.backend_commit_p99_s, commit[inst], f"commit p99 {inst}")

    # The backfilled history (PromQL range queries) ends on the first frame's numbers.
    for inst, row in rows.items():
        pts = first.history.points(key("api.cpu_cores", inst))
        last_backfilled = [v for t, v in pts if t == at]
        assert last_backfilled and last_backfilled[0] == pytest.approx(row.cpu_cores.value)
        assert len(pts) >= 2, "the hour of history came back as more than one point"
    for inst, m in members.items():
        if m.backend_commit_p99_s.value is None:
            continue
        pts = first.history.points(key("etcd.commit_p99_s", inst))
        last = [v for t, v in pts if t == at]
        assert last and last[0] == pytest.approx(m.backend_commit_p99_s.value)


async def test_live_source_with_prometheus_starts_with_the_window_and_the_past(lab: Lab) -> None:
    """Through the live source: the first frame that shows etcd (read only through
    Prometheus here) already has windowed rates and quantiles and the signals' past."""
    prom = str(lab.info["prometheus_url"])
    wait_for_two_windows(lab, prom)
    kubeconfig = await account(lab, "ktop")
    started = time.time()
    opts = options(lab, kubeconfig, prometheus=prom, prometheus_s=ONE_POLL_S, etcd_metrics=())
    async with live(opts) as run:
        snap = await run.until(
            lambda s: len(s.etcd.members) == 3,
            timeout_s=deadline(prometheus_first_s(ONE_POLL_S, polls=1)),
            what="etcd through Prometheus",
        )
        backfill = run.source.backfill
        assert backfill is not None and not backfill.errors, backfill
        for m in snap.etcd.members:
            assert m.proposals_failed_per_s.known, (m.instance, m.proposals_failed_per_s)
            assert m.leader_changes.known
            fsync = m.wal_fsync_p99_s
            assert (fsync.known or fsync.empty) and not fsync.lifetime, (m.instance, fsync)
            past = snap.history.points(key("etcd.db_size_bytes", m.instance))
            assert past and past[0][0] < started - 30, ("history from before ktop started", past)
        # The day's SLO counts come with the first poll (the frame above may be the
        # backfill's), named as the apiservers' rows.
        await run.until(
            lambda s: (
                s.apiservers.instances
                and all(x.budget_today for r in s.apiservers.instances for x in r.slos)
            ),
            timeout_s=deadline(prometheus_first_s(ONE_POLL_S, polls=1)),
            what="every apiserver's SLO budget counted today by Prometheus",
        )


async def test_the_days_slo_counts_equal_prometheus_increase_of_the_buckets(
    lab: Lab, prom_url: str
) -> None:
    """The budget burned today: what the transport reads per instance and SLO equals the
    calls and slow calls Prometheus counts since 00:00 UTC, asked bucket by bucket."""
    wait_for_two_windows(lab, prom_url)
    client = PrometheusConnect(url=prom_url)
    metrics = PrometheusMetrics(client, prom_url, time.time)
    got: list[Event] = []
    await metrics.poll_once(got.extend)
    at = metrics.evaluated_at
    assert metrics.healthy and at is not None, metrics.last_error
    days = {e.instance: e for e in got if isinstance(e, SloDayCounted)}
    apiservers = {t.instance for t in metrics.seen if t.component is Component.APISERVER}
    assert apiservers and set(days) == apiservers, (days, apiservers)
    seconds = int(at - day_start(at))
    family = sli_family_exposed(prom_url, at)
    for slo in SLOS:
        verbs = "|".join(sorted(slo.verbs))
        scope = "" if slo.scope is None else f',scope="{slo.scope}"'
        sel = f'job="apiserver",verb=~"{verbs}"{scope}'
        bound = f"{slo.limit_s:g}|{slo.limit_s:.1f}"
        calls = prom_at(
            prom_url,
            f'sum by (instance) (increase({family}_bucket{{{sel},le="+Inf"}}[{seconds}s]))',
            at,
            "instance",
        )
        fast = prom_at(
            prom_url,
            f'sum by (instance) (increase({family}_bucket{{{sel},le=~"{bound}"}}[{seconds}s]))',
            at,
            "instance",
        )
        for inst, day in days.items():
            assert day.since == at - at % 86400
            counted = {k: (slow, n) for k, slow, n in day.counts}
            if inst not in calls:
                assert slo.kind not in counted, (inst, slo.kind)
                continue
            slow, n = counted[slo.kind]
            assert n == pytest.approx(calls[inst], rel=1e-9), (inst, slo.kind)
            assert slow == pytest.approx(calls[inst] - fast.get(inst, 0.0), abs=1e-6)
        if slo.kind == SLOS[0].kind:
            assert calls and min(calls.values()) > 0, "mutating calls were counted today"
