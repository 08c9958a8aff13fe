"""API call latency against the scalability SLOs, per instance: from a real apiserver's
SLI histogram (a single scrape is a lifetime value, never graded), from two scrapes of
known bucket increases (p99 and the slow share computed here by hand), and from the
simulator's slow-disk story (mutating calls miss their SLO; the evidence says so)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.analysis.triage.evaluate import triage
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Sample, Target
from ktop.model.exposition import parse_exposition
from ktop.model.slo import MUTATING, SLOS
from ktop.model.wanted import FAMILIES
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render.apiservers import panel, tables

FIXTURE = Path(__file__).parent.parent / "fixtures" / "nri-k8s-1.35_kube-apiserver_metrics.prom"
SLI = "apiserver_request_sli_duration_seconds"
TARGET = Target(Component.APISERVER, "i0")


def _p99(buckets: dict[float, float]) -> float:
    """Prometheus' histogram_quantile, written out: linear inside the bucket."""
    bounds = sorted(buckets)
    rank = 0.99 * buckets[math.inf]
    lo, lo_count = 0.0, 0.0
    for b in bounds:
        if buckets[b] >= rank:
            return (
                lo if b == math.inf else lo + (b - lo) * (rank - lo_count) / (buckets[b] - lo_count)
            )
        lo, lo_count = b, buckets[b]
    raise AssertionError("unreachable")


def test_a_real_sli_histogram_gives_a_lifetime_p99_that_is_not_graded() -> None:
    text = FIXTURE.read_text()
    want: dict[float, float] = defaultdict(float)
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == SLI + "_bucket" and s.labels["verb"] in MUTATING:
                want[float(s.labels["le"])] += s.value
    m = ClusterModel()
    m.apply(
        MetricsScraped(1000.0, TARGET, parse_exposition(text, FAMILIES[TARGET.component]).samples)
    )
    row = m.snapshot().apiservers.instances[0]
    mutating = next(s for s in row.slos if s.kind == "mutating")
    assert not mutating.total  # the SLI, not the total duration
    assert mutating.p99_s.value == pytest.approx(_p99(dict(want)))
    assert mutating.p99_s.lifetime and mutating.ratio.value is None
    assert "lifetime" in mutating.ratio.reason


def _hist(verb: str, scope: str, counts: dict[float, float]) -> list[Sample]:
    lab = (("scope", scope), ("verb", verb))
    out = [Sample(SLI + "_bucket", (("le", "+Inf" if b == math.inf else repr(b)), *lab), c)
           for b, c in counts.items()]  # fmt: skip
    out.append(Sample(SLI + "_count", lab, counts[math.inf]))
    return out


def test_two_scrapes_give_the_window_s_p99_and_slow_share() -> None:
    bounds = (0.5, 1.0, 2.0, 5.0, math.inf)
    before = dict(zip(bounds, (100.0, 100.0, 100.0, 100.0, 100.0), strict=True))
    # in the window: 80 calls under 0.5 s, 10 under 1 s, 6 under 2 s, 4 under 5 s
    after = dict(zip(bounds, (180.0, 190.0, 196.0, 200.0, 200.0), strict=True))
    m = ClusterModel()
    m.apply(MetricsScraped(1000.0, TARGET, tuple(_hist("POST", "namespace", before))))
    m.apply(MetricsScraped(1030.0, TARGET, tuple(_hist("POST", "namespace", after))))
    row = m.snapshot().apiservers.instances[0]
    mutating = next(s for s in row.slos if s.kind == "mutating")
    increase = {b: after[b] - before[b] for b in bounds}
    assert mutating.p99_s.value == pytest.approx(_p99(increase))
    assert mutating.slow_share.value == pytest.approx(10 / 100)  # above 1 s: 6 + 4
    assert mutating.ratio.value == pytest.approx(_p99(increase) / 1.0)
    reads = [s for s in row.slos if s.kind != "mutating"]
    assert all(s.p99_s.empty for s in reads)  # no read in the window: nothing to measure
    cells = [c.plain for c in next(r for r in tables(m.snapshot().apiservers, 1030.0)[0].rows
                                   if r.key == "slo:mutating").cells]  # fmt: skip
    assert cells[1].startswith("✖") and re.search(r"of 1\.0s \(10(\.0)?% slow\)", cells[1])


def test_slow_disk_misses_the_mutating_slo_and_triage_says_so() -> None:
    sim = Simulator("etcd-slow-disk", nodes=300)
    m = ClusterModel()
    m.apply_all(sim.start())
    m.apply_all(sim.advance(200))
    snap = m.snapshot()
    for row in snap.apiservers.instances:
        worst = row.worst_slo
        assert worst is not None and worst.kind == "mutating" and worst.ratio.or_(0) > 1
    assert "p99/slo" in panel(snap.apiservers, snap.at, None, 6, 80).lines[0].plain
    evidence = next(e for p in triage(snap).paths for e in p.evidence if e.id == "api.slo")
    assert evidence.status.value in ("warn", "bad") and "mutating p99" in evidence.detail


def test_a_steady_cluster_meets_every_slo() -> None:
    sim = Simulator("steady", nodes=300)
    m = ClusterModel()
    m.apply_all(sim.start())
    m.apply_all(sim.advance(120))
    for row in m.snapshot().apiservers.instances:
        assert [s.kind for s in row.slos] == [s.kind for s in SLOS]
        assert all(s.ratio.value is None or s.ratio.value <= 1 for s in row.slos)
    evidence = next(e for p in triage(m.snapshot()).paths for e in p.evidence if e.id == "api.slo")
    assert evidence.status.value == "ok"
