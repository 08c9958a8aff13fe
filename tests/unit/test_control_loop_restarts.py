"""The scheduler's and controller-manager's most recent restart (``ha.scheduler_restart``,
``ha.controller_manager_restart`` on the HA path), from their own start times: a one-shot
triage sees a fail-over's cold start with no history.

The metrics are a real kube-scheduler's and kube-controller-manager's (1.35); the start
times expected are read from them with prometheus_client's parser, not ktop's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Evidence, Status, Verdict
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Target
from ktop.model.exposition import parse_exposition
from ktop.model.wanted import FAMILIES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL = {
    Component.SCHEDULER: FIXTURES / "nri-k8s-1.35_kube-scheduler_metrics.prom",
    Component.CONTROLLER_MANAGER: FIXTURES / "nri-k8s-1.35_kube-controller-manager_metrics.prom",
}
EVIDENCE = {
    Component.SCHEDULER: "ha.scheduler_restart",
    Component.CONTROLLER_MANAGER: "ha.controller_manager_restart",
}


def started(component: Component) -> float:
    """The real process' start time, as prometheus_client reads it."""
    for family in text_string_to_metric_families(REAL[component].read_text()):
        if family.name == "process_start_time_seconds":
            return float(family.samples[0].value)
    raise AssertionError("no process_start_time_seconds in the fixture")


def evidence(component: Component, at: float, *, with_start: bool = True) -> tuple[Evidence, str]:
    """The component's restart evidence of a snapshot at ``at``, and the HA verdict."""
    text = REAL[component].read_text()
    if not with_start:
        text = "\n".join(ln for ln in text.splitlines() if "process_start_time" not in ln)
    parsed = parse_exposition(text, FAMILIES[component])
    model = ClusterModel()
    model.apply_all([MetricsScraped(at, Target(component, f"{component.value}-0"), parsed.samples)])
    ha = next(p for p in triage(model.snapshot()).paths if p.id == "HA")
    return next(e for e in ha.evidence if e.id == EVIDENCE[component]), ha.verdict.value


@pytest.mark.parametrize("component", list(REAL))
def test_a_restart_within_the_look_back_is_a_warning_with_its_start_as_onset(
    component: Component,
) -> None:
    start = started(component)
    e, verdict = evidence(component, start + 40)
    assert (e.status, e.value) == (Status.WARN, 40.0)
    assert e.trend is not None and e.trend.since == start
    assert f"{component.value}-0 started at" in e.detail
    # context for the path, not a verdict on its own
    assert not e.first_line and verdict != Verdict.SUSPECT.value


@pytest.mark.parametrize("component", list(REAL))
def test_a_start_before_the_look_back_is_ok_and_none_is_unknown(component: Component) -> None:
    start = started(component)
    model_window = ClusterModel().snapshot().window_s
    e, _ = evidence(component, start + 10 * model_window)
    assert (e.status, e.value) == (Status.OK, 10 * model_window)
    unexposed, _ = evidence(component, start + 40, with_start=False)
    assert unexposed.status is Status.UNKNOWN and "not exposed" in unexposed.detail
