"""The scheduler's throughput as the apiservers count it: pods bound per second from
``apiserver_request_total{verb="POST",subresource="binding",code="201"}``, read from a
real apiserver's metrics (bumped in a second scrape) and from the simulator, where the
scheduler's own attempt counter is the independent truth."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.analysis.triage.evaluate import triage
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Target
from ktop.model.exposition import parse_exposition
from ktop.model.wanted import FAMILIES
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render.scheduler import panel

FIXTURE = Path(__file__).parent.parent / "fixtures" / "nri-k8s-1.35_kube-apiserver_metrics.prom"
BINDING = re.compile(
    r'^(apiserver_request_total\{code="201",[^}]*subresource="binding",verb="POST"[^}]*\}) (\S+)$',
    re.M,
)


def _bindings(text: str) -> float:
    """The fixture's binding count, read with prometheus_client's own parser."""
    total = 0.0
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            lab = s.labels
            if s.name == "apiserver_request_total" and (
                lab.get("verb"),
                lab.get("subresource"),
                lab.get("code"),
            ) == ("POST", "binding", "201"):
                total += s.value
    return total


def test_a_real_apiserver_s_bindings_give_the_rate() -> None:
    text = FIXTURE.read_text()
    first = _bindings(text)
    assert first > 0
    later = BINDING.sub(lambda m: f"{m.group(1)} {float(m.group(2)) + 30}", text)
    bumped = _bindings(later) - first  # 30 per binding series
    assert bumped >= 30
    m = ClusterModel()
    target = Target(Component.APISERVER, "i0")
    wanted = FAMILIES[Component.APISERVER]
    m.apply(MetricsScraped(1000.0, target, parse_exposition(text, wanted).samples))
    assert m.snapshot().scheduler.bindings_per_s.value is None  # one scrape: no rate yet
    m.apply(MetricsScraped(1010.0, target, parse_exposition(later, wanted).samples))
    assert m.snapshot().scheduler.bindings_per_s.value == pytest.approx(bumped / 10.0)


def test_keeping_the_subresource_keeps_the_series_few() -> None:
    """The extra label must not turn a few dozen series into thousands."""
    text = FIXTURE.read_text()
    keys = {
        (s.labels.get("verb"), s.labels.get("code"), s.labels.get("subresource"))
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == "apiserver_request_total"
    }
    pairs = {(v, c) for v, c, _ in keys}
    assert len(keys) <= 2 * len(pairs)


def test_the_simulated_bindings_follow_the_scheduler_s_own_count() -> None:
    sim = Simulator("scheduler-backlog", nodes=1000)
    m = ClusterModel()
    m.apply_all(sim.start())
    m.apply_all(sim.advance(150))
    snap = m.snapshot()
    bound = snap.scheduler.bindings_per_s.value
    scheduled = snap.scheduler.attempts_per_s["scheduled"].value
    assert bound is not None and scheduled is not None and scheduled > 0
    assert bound == pytest.approx(scheduled, rel=0.1)
    assert " · bound " in panel(snap.scheduler, None, 6, 80).title.plain
    evidence = {p.id: e for p in triage(snap).paths for e in p.evidence if e.id == "sched.bindings"}
    assert set(evidence) == {"P2", "P6"}
    assert evidence["P2"].value == pytest.approx(bound) and "wait" in evidence["P2"].detail
