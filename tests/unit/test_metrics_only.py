"""Metrics-only mode: zones, readiness and pending pods from metrics, as a view of its own.

Real dumps (kube-controller-manager and kube-scheduler of a 1.35 cluster) give the
node_collector and scheduler families; expected values are read from the dumps by the
Prometheus client library's parser, and zone states from the controller's rule written
out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.model.area_metrics_only import CANNOT_KNOW, split_zone_key
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_KUBE_STATE_METRICS,
    Area,
    Component,
    FeedFailed,
    MetricsOnlyMode,
    MetricsScraped,
    NodeReadinessByLabel,
    NodeRecord,
    NodeUpserted,
    Readiness,
    Sample,
    Target,
)
from ktop.model.exposition import parse_exposition
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.source_events import SourceStarted
from ktop.model.wanted import FAMILIES
from ktop.ui.render.areas import drill_view, overview_panel

FIXTURES = Path(__file__).parent.parent / "fixtures"
CM = "nri-k8s-1.35_kube-controller-manager_metrics.prom"
SCHED = "nri-k8s-1.35_kube-scheduler_metrics.prom"
AT = 1_000.0


def _scrape(component: Component, text: str, at: float = AT) -> MetricsScraped:
    parsed = parse_exposition(text, FAMILIES[component])
    assert parsed.errors == ()
    return MetricsScraped(at, Target(component, "i0"), parsed.samples)


def _gauges(text: str, name: str) -> dict[str, float]:
    """One label's value -> sample value, read by the reference parser."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name:
                (value,) = [v for k, v in s.labels.items() if k in ("zone", "plugin", "queue")]
                out[value] = float(s.value)
    return out


def _model(*events: object) -> ClusterModel:
    m = ClusterModel()
    m.apply(MetricsOnlyMode(AT, "--metrics-only"))
    for e in events:
        m.apply(e)  # type: ignore[arg-type]
    return m


def test_real_controller_manager_dump_gives_the_zones_it_exports() -> None:
    text = (FIXTURES / CM).read_text()
    view = _model(_scrape(Component.CONTROLLER_MANAGER, text)).snapshot().nodes.metrics_only
    assert view is not None and view.zones_reason == ""
    sizes = _gauges(text, "node_collector_zone_size")
    bad = _gauges(text, "node_collector_unhealthy_nodes_in_zone")
    health = _gauges(text, "node_collector_zone_health")
    assert sizes == {"": 1.0}  # the dump's one node has no zone labels: the key is ""
    (zone,) = view.zones
    assert (zone.region, zone.zone) == ("", "")
    assert (zone.size, zone.unhealthy, zone.health_pct.value) == (
        sizes[""],
        bad[""],
        health[""],
    )
    assert zone.state is ZoneState.NORMAL  # 1 ready, 0 not ready


def test_real_scheduler_dump_gives_queues_and_plugins() -> None:
    text = (FIXTURES / SCHED).read_text()
    snap = _model(_scrape(Component.SCHEDULER, text)).snapshot()
    view = snap.scheduler.metrics_only
    assert view is not None and view.plugins_reason == ""
    want_plugins = _gauges(text, "scheduler_unschedulable_pods")
    assert {p: v.value for p, v in view.unschedulable_by_plugin} == want_plugins
    assert view.unschedulable_by_plugin[0][0] == "NodeAffinity"  # most pods first
    queues = _gauges(text, "scheduler_pending_pods")
    assert {q: v.value for q, v in snap.scheduler.queue.items()} == queues
    # Pods are not read: the pods' own view is unknown with the reason, never zero.
    assert not snap.scheduler.pods_known
    assert snap.scheduler.pods_reason == "metrics-only (--metrics-only): pods are not read"
    assert not snap.scheduler.oldest_pending_s.known


def _cm_text(zones: dict[str, tuple[int, int]]) -> str:
    lines = []
    for key, (size, bad) in zones.items():
        label = key.replace("\\", "\\\\")
        lines.append(f'node_collector_zone_size{{zone="{label}"}} {size}')
        lines.append(f'node_collector_unhealthy_nodes_in_zone{{zone="{label}"}} {bad}')
        health = 100.0 * (size - bad) / size if size else 100.0
        lines.append(f'node_collector_zone_health{{zone="{label}"}} {health}')
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("size", "bad", "state"),
    [
        (10, 10, ZoneState.FULL_DISRUPTION),  # no node ready, some not
        (10, 6, ZoneState.PARTIAL_DISRUPTION),  # 6/10 >= 0.55 and more than 2
        (10, 5, ZoneState.NORMAL),  # 5/10 < 0.55
        (4, 3, ZoneState.PARTIAL_DISRUPTION),  # 3/4, more than 2
        (2, 1, ZoneState.NORMAL),  # not more than 2 not ready
        (0, 0, None),  # a zone that went away: size 0, health 100, left out
    ],
)
def test_zone_state_from_the_controllers_gauges(size: int, bad: int, state: ZoneState) -> None:
    key = "region-1:\x00:zone-a"  # GetZoneKey: region, ":", NUL, ":", zone
    m = _model(_scrape(Component.CONTROLLER_MANAGER, _cm_text({key: (size, bad)})))
    view = m.snapshot().nodes.metrics_only
    assert view is not None
    if state is None:
        assert view.zones == ()
        return
    (zone,) = view.zones
    assert (zone.region, zone.zone, zone.size, zone.unhealthy) == ("region-1", "zone-a", size, bad)
    assert zone.state is state


def test_split_zone_key() -> None:
    assert split_zone_key("r:\x00:z") == ("r", "z")
    assert split_zone_key("") == ("", "")
    assert split_zone_key(":\x00:z") == ("", "z")


def test_metrics_view_equals_the_full_view_of_the_same_nodes() -> None:
    """The same nodes, once as objects and once as the controller's gauges of them."""
    ready = {"zone-a": (0, 5), "zone-b": (3, 4), "zone-c": (7, 0)}  # zone: (ready, not ready)
    full = ClusterModel()
    n = 0
    for zone, (good, bad) in ready.items():
        for i in range(good + bad):
            n += 1
            state = Readiness.TRUE if i < good else Readiness.UNKNOWN
            rec = NodeRecord(f"n{n}", "region-1", zone, "", state, None)
            full.apply(NodeUpserted(AT, rec))
    gauges = {f"region-1:\x00:{z}": (g + b, b) for z, (g, b) in ready.items()}
    metrics = _model(_scrape(Component.CONTROLLER_MANAGER, _cm_text(gauges)))
    view = metrics.snapshot().nodes.metrics_only
    assert view is not None
    got = {(z.region, z.zone): (z.state, z.size - z.unhealthy, z.unhealthy) for z in view.zones}
    want = {
        (z.region, z.zone): (z.state, z.ready, z.unhealthy) for z in full.snapshot().nodes.zones
    }
    assert got == want


def test_readiness_per_label_and_its_absence() -> None:
    m = _model()
    view = m.snapshot().nodes.metrics_only
    assert view is not None and view.readiness == () and view.readiness_reason
    m.apply(FeedFailed(AT, FEED_KUBE_STATE_METRICS, "no kube_node_status_condition"))
    view = m.snapshot().nodes.metrics_only
    assert view is not None and view.readiness_reason == "no kube_node_status_condition"
    label = "topology.kubernetes.io/zone"
    m.apply(NodeReadinessByLabel(AT + 1, label, (("zone-a", 0, 3), ("zone-b", 3, 0))))
    view = m.snapshot().nodes.metrics_only
    assert view is not None and view.readiness_reason == ""
    assert [(r.value, r.ready, r.not_ready) for r in view.readiness] == [
        ("zone-a", 0, 3),
        ("zone-b", 3, 0),
    ]


def test_no_controller_manager_leaves_zones_unknown_not_normal() -> None:
    # started long ago; the Prometheus answered (an apiserver target) but holds no
    # controller-manager
    apiserver = MetricsScraped(AT, Target(Component.APISERVER, "a"), (Sample("x", (), 1.0),))
    snap = _model(SourceStarted(AT - 600, "live", "prom"), apiserver).snapshot()
    view = snap.nodes.metrics_only
    assert view is not None and view.zones == ()
    assert view.zones_reason == "no controller-manager metrics source"
    panel = overview_panel(snap, Area.NODES, 10, 100)
    assert panel.level.name == "UNKNOWN"
    assert "zones unknown: no controller-manager metrics source" in panel.plain


@pytest.mark.parametrize("width", [80, 160])
def test_every_pane_says_which_view_it_shows_and_what_it_cannot_know(width: int) -> None:
    text = (FIXTURES / CM).read_text()
    snap = _model(
        _scrape(Component.CONTROLLER_MANAGER, text),
        _scrape(Component.SCHEDULER, (FIXTURES / SCHED).read_text()),
        MetricsScraped(AT, Target(Component.APISERVER, "a"), (Sample("x", (), 1.0),)),
    ).snapshot()
    for area in Area:
        panel = overview_panel(snap, area, 12, width // 2)
        assert "metrics-only view" in panel.title.plain, area
        drill = drill_view(snap, area)
        assert "metrics-only view (--metrics-only)" in drill.plain, area
        for what in CANNOT_KNOW[area]:
            assert what in drill.plain, (area, what)
    nodes = drill_view(snap, Area.NODES)
    unknown = {t.key: t for t in nodes.tables}["unknown"]
    assert [r.key for r in unknown.rows] == list(CANNOT_KNOW[Area.NODES])
    assert all(r.cells[1].plain == "?" for r in unknown.rows)  # unknown, never ok


def test_full_mode_has_no_metrics_view() -> None:
    m = ClusterModel()
    m.apply(_scrape(Component.CONTROLLER_MANAGER, (FIXTURES / CM).read_text()))
    snap = m.snapshot()
    assert snap.nodes.metrics_only is None and snap.scheduler.metrics_only is None
    assert "metrics-only" not in overview_panel(snap, Area.APF, 10, 60).title.plain


def test_a_keyframe_keeps_the_metrics_only_view() -> None:
    from ktop.model.state import export_state, import_state

    m = _model(
        _scrape(Component.CONTROLLER_MANAGER, (FIXTURES / CM).read_text()),
        NodeReadinessByLabel(AT, "topology.kubernetes.io/zone", (("zone-a", 2, 1),)),
    )
    again = import_state(export_state(m))
    assert again.snapshot().nodes.metrics_only == m.snapshot().nodes.metrics_only


def test_zone_findings_come_from_the_controllers_gauges() -> None:
    from ktop.analysis.rules import evaluate

    zones = {"r:\x00:zone-a": (40, 40), "r:\x00:zone-b": (40, 30), "r:\x00:zone-c": (40, 0)}
    snap = _model(_scrape(Component.CONTROLLER_MANAGER, _cm_text(zones))).snapshot()
    found = {f.code: f.title for f in evaluate(snap) if f.code.startswith("KT-NODE")}
    assert found == {
        "KT-NODE-001": "zone zone-a: 40/40 nodes not Ready (FullDisruption, from the node "
        "lifecycle controller's metrics)",
        "KT-NODE-002": "zone zone-b: 30/40 nodes not Ready (PartialDisruption, from the node "
        "lifecycle controller's metrics)",
    }
    unknown = {f.code for f in evaluate(_model().snapshot()) if f.code.startswith("KT-NODE")}
    assert unknown == {"KT-NODE-010"}


def test_a_fleet_row_of_a_metrics_only_cell_counts_the_controllers_zones() -> None:
    from ktop.analysis.fleet import summarize
    from ktop.analysis.rules import evaluate
    from ktop.analysis.triage.evaluate import triage

    zones = {"r1:\x00:a": (10, 10), "r1:\x00:b": (7, 1), "r2:\x00:c": (5, 0)}
    snap = _model(_scrape(Component.CONTROLLER_MANAGER, _cm_text(zones))).snapshot()
    row = summarize("cell", snap, evaluate(snap), triage(snap))
    assert (row.nodes_total.value, row.not_ready.value) == (10 + 7 + 5, 10 + 1 + 0)
    assert dict(row.zones) == {
        "a": ZoneState.FULL_DISRUPTION,
        "b": ZoneState.NORMAL,
        "c": ZoneState.NORMAL,
    }
    assert row.regions == ("r1", "r2") and row.zones_reason == ""
    # No controller-manager read: the row's nodes are unknown with the reason, not 0.
    blind = _model().snapshot()
    row = summarize("cell", blind, evaluate(blind), triage(blind))
    assert row.not_ready.value is None and row.zones == ()
    assert row.zones_reason == "no controller-manager metrics source"
