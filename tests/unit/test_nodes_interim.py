"""The nodes area's first answer while ktop's own node list loads (issue 24 item 1).

On a large cluster the first node list takes long. Meanwhile the nodes area shows the
node lifecycle controller's zones (``node_collector_*``), saying where they come from,
and stays unknown; ktop's own count replaces them once the list completes.

Expected values are read from a real kube-controller-manager dump by the Prometheus
client library's parser, or written out by hand (zone states by the controller's rule:
FullDisruption when no node is ready; PartialDisruption when more than 2 are not and
their share is at least the threshold).
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from ktop.analysis.rules import evaluate
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_NODES,
    Area,
    Component,
    FeedProgress,
    FeedSynced,
    MetricsOnlyMode,
    MetricsScraped,
    NodeRecord,
    NodeUpserted,
    Readiness,
    ScrapeFailed,
    SourceStarted,
    Target,
)
from ktop.model.exposition import parse_exposition
from ktop.model.model_inputs import ModelConfig
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.wanted import FAMILIES
from ktop.ui.render.areas import drill_view, overview_panel
from ktop.ui.render.level import Level

FIXTURES = Path(__file__).parent.parent / "fixtures"
CM_DUMP = "nri-k8s-1.35_kube-controller-manager_metrics.prom"
AT = 1_000.0
CM = Target(Component.CONTROLLER_MANAGER, "kube-controller-manager-0:10257")
SOURCE = "node lifecycle controller"


def _scrape(text: str, at: float = AT) -> MetricsScraped:
    parsed = parse_exposition(text, FAMILIES[Component.CONTROLLER_MANAGER])
    assert parsed.errors == ()
    return MetricsScraped(at, CM, parsed.samples)


def _cm_text(zones: dict[str, tuple[int, int]]) -> str:
    """The controller's three zone gauges, ``GetZoneKey`` -> (size, unhealthy)."""
    lines = []
    for key, (size, bad) in zones.items():
        lines.append(f'node_collector_zone_size{{zone="{key}"}} {size}')
        lines.append(f'node_collector_unhealthy_nodes_in_zone{{zone="{key}"}} {bad}')
        lines.append(f'node_collector_zone_health{{zone="{key}"}} {100.0 * (size - bad) / size}')
    return "\n".join(lines) + "\n"


def _model(*events: object, config: ModelConfig | None = None) -> ClusterModel:
    m = ClusterModel(config)
    for e in events:
        m.apply(e)  # type: ignore[arg-type]
    return m


# 100,000 nodes in three zones of region r: a is down, b a third not Ready, c healthy
ZONES = {"r:\x00:a": (30_000, 30_000), "r:\x00:b": (40_000, 14_000), "r:\x00:c": (30_000, 0)}
LISTING = FeedProgress(AT, FEED_NODES, 41_500, 100_000)


def test_the_real_controller_dump_gives_the_zones_while_the_list_loads() -> None:
    text = (FIXTURES / CM_DUMP).read_text()
    snap = _model(_scrape(text), LISTING).snapshot().nodes
    want = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name.startswith("node_collector_") and "zone" in s.labels:
                want[(s.name, s.labels["zone"])] = float(s.value)
    assert snap.interim is not None and snap.interim.source == SOURCE
    (zone,) = snap.interim.zones  # the dump's one node has no zone labels: the key is ""
    assert (zone.region, zone.zone) == ("", "")
    assert (zone.size, zone.unhealthy, zone.health_pct.value) == (
        want[("node_collector_zone_size", "")],
        want[("node_collector_unhealthy_nodes_in_zone", "")],
        want[("node_collector_zone_health", "")],
    )
    assert zone.state is ZoneState.NORMAL  # 1 ready, 0 not ready
    # the nodes are still unknown, with the listing reason: the controller's count is not ours
    assert not snap.nodes_known
    assert snap.nodes_reason == "nodes 41,500 / ~100,000 listed so far"
    assert snap.listed == (41_500, 100_000)


def test_zone_states_follow_the_configured_threshold() -> None:
    snap = _model(_scrape(_cm_text(ZONES)), LISTING).snapshot().nodes
    assert snap.interim is not None
    got = {z.zone: (z.size, z.unhealthy, z.state) for z in snap.interim.zones}
    assert got == {
        "a": (30_000, 30_000, ZoneState.FULL_DISRUPTION),  # none ready
        "b": (40_000, 14_000, ZoneState.NORMAL),  # 35 % < 55 %
        "c": (30_000, 0, ZoneState.NORMAL),
    }
    # a lower threshold: b's 35 % is now a partial disruption
    low = _model(
        _scrape(_cm_text(ZONES)), LISTING, config=ModelConfig(unhealthy_zone_threshold=0.3)
    )
    interim = low.snapshot().nodes.interim
    assert interim is not None
    assert {z.zone: z.state for z in interim.zones}["b"] is ZoneState.PARTIAL_DISRUPTION


def test_ktops_own_count_replaces_them_when_the_list_completes() -> None:
    m = _model(_scrape(_cm_text({"r:\x00:a": (3, 3)})), LISTING)
    assert m.snapshot().nodes.interim is not None
    for i in range(3):  # the list completes: three nodes of zone a, all Ready
        m.apply(NodeUpserted(AT + 1, NodeRecord(f"n{i}", "r", "a", "", Readiness.TRUE, None)))
    m.apply(FeedSynced(AT + 1, FEED_NODES))
    snap = m.snapshot().nodes
    assert snap.interim is None and snap.listed is None and snap.nodes_known
    assert [(z.zone, z.total, z.ready, z.state) for z in snap.zones] == [
        ("a", 3, 3, ZoneState.NORMAL)
    ]
    # the controller's (older) FullDisruption no longer raises a finding: ktop's count does
    codes = {f.code for f in evaluate(m.snapshot())}
    assert "KT-NODE-001" not in codes and "KT-NODE-010" not in codes
    # a later scrape changes nothing once listed
    m.apply(_scrape(_cm_text({"r:\x00:a": (3, 3)}), AT + 2))
    assert m.snapshot().nodes.interim is None


def test_before_the_first_page_the_controllers_zones_show_too() -> None:
    """The nodes feed has not answered at all yet: the zones are there within a scrape."""
    snap = _model(_scrape(_cm_text(ZONES))).snapshot().nodes
    assert snap.interim is not None and not snap.nodes_known and snap.listed is None
    assert len(snap.interim.zones) == 3


def test_metrics_only_mode_is_unchanged() -> None:
    m = _model(MetricsOnlyMode(AT, "--metrics-only"), _scrape(_cm_text(ZONES)))
    snap = m.snapshot().nodes
    assert snap.interim is None
    assert snap.metrics_only is not None and len(snap.metrics_only.zones) == 3


def test_without_a_controller_manager_the_listing_reason_is_all() -> None:
    started = SourceStarted(AT - 100, "live", "test")  # long enough ago: overdue
    snap = _model(started, LISTING).snapshot()
    assert snap.nodes.interim is None
    assert snap.nodes.nodes_reason == "nodes 41,500 / ~100,000 listed so far"
    panel = overview_panel(snap, Area.NODES, 10, 80)
    assert "nodes 41,500 / ~100,000 listed so far" in panel.title.plain
    assert SOURCE not in panel.plain and panel.level is Level.UNKNOWN


def test_a_failing_controller_manager_gives_no_zones() -> None:
    m = _model(_scrape(_cm_text(ZONES)), LISTING)
    m.apply(ScrapeFailed(AT + 1, CM, "connection refused"))
    assert m.snapshot().nodes.interim is None


def test_findings_name_the_source_and_the_area_stays_unknown() -> None:
    snap = _model(_scrape(_cm_text(ZONES)), LISTING).snapshot()
    nodes = [(f.code, f.title) for f in evaluate(snap) if f.code.startswith("KT-NODE")]
    assert sorted(nodes) == [
        (
            "KT-NODE-001",
            "zone a: 30,000/30,000 nodes not Ready (FullDisruption, from the node lifecycle "
            "controller's metrics while ktop's node list loads)",
        ),
        ("KT-NODE-010", "nodes unknown: nodes 41,500 / ~100,000 listed so far"),
    ]


def test_triage_does_not_take_the_controllers_zones_for_ktops_count() -> None:
    from ktop.analysis.triage.evaluate import triage
    from ktop.analysis.triage.types import Status

    report = triage(_model(_scrape(_cm_text({"r:\x00:a": (5, 0)})), LISTING).snapshot())
    zone = [e for p in report.paths for e in p.evidence if e.id == "nodes.zone_disruption"]
    # the nodes are unknown (listing), not ok on the strength of the controller's count
    assert zone and all(e.status is Status.UNKNOWN for e in zone)
    assert all("listed so far" in e.detail for e in zone)


def test_the_panel_at_80_columns_says_where_the_zones_come_from() -> None:
    snap = _model(_scrape(_cm_text(ZONES)), LISTING).snapshot()
    panel = overview_panel(snap, Area.NODES, 10, 80)
    # 100,000 nodes, 44,000 not Ready: 56,000 ready
    assert panel.title.plain.startswith(
        "nodes ✖ 56,000/100,000 ready (node lifecycle controller) · "
        "nodes 41,500 / ~100,000 listed so far"
    )
    assert panel.level is Level.CRIT  # zone a is down, as the controller counts it
    text = panel.plain
    assert "node_collector_*" in text and "until ktop's list completes" in text
    assert "26,000/40,000" in text and "FullDisruption" in text  # zone b ready/size; zone a
    assert all(len(line.plain) <= 80 for line in panel.lines)
    # 80x24: the nodes panel gets a few rows; the source is still named in the title
    small = overview_panel(snap, Area.NODES, 3, 38)
    assert "(node lifecycle controller)" in small.title.plain
    assert all(len(line.plain) <= 38 for line in small.lines)


def test_healthy_controller_zones_are_not_called_healthy() -> None:
    snap = _model(_scrape(_cm_text({"r:\x00:a": (5, 0)})), LISTING).snapshot()
    assert overview_panel(snap, Area.NODES, 10, 80).level is Level.UNKNOWN


def test_the_drill_down_shows_the_controllers_zones() -> None:
    snap = _model(_scrape(_cm_text(ZONES)), LISTING).snapshot()
    view = drill_view(snap, Area.NODES)
    zones = {t.key: t for t in view.tables}["zones"]
    assert "node lifecycle controller" in zones.title
    assert [r.key for r in zones.rows] == ["r/a", "r/b", "r/c"]
    assert [r.cells[3].plain.strip(" ✖▲✓") for r in zones.rows] == [
        "FullDisruption",
        "Normal",
        "Normal",
    ]
    assert "56,000/100,000 ready (node lifecycle controller)" in view.plain
    assert "ktop's own count replaces them" in view.plain


def test_history_and_fleet_read_the_controllers_count_meanwhile() -> None:
    from ktop.analysis.fleet import summarize
    from ktop.analysis.triage.evaluate import triage
    from ktop.model.extractors import zones_size, zones_unhealthy

    m = _model(_scrape(_cm_text(ZONES)), LISTING)
    for i in range(3):  # part of the list: not the cluster
        m.apply(NodeUpserted(AT, NodeRecord(f"n{i}", "r", "c", "", Readiness.TRUE, None)))
    snap = m.snapshot()
    assert {z: v.value for z, v in zones_unhealthy(snap)} == {"a": 30_000, "b": 14_000, "c": 0}
    assert {z: v.value for z, v in zones_size(snap)} == {"a": 30_000, "b": 40_000, "c": 30_000}
    row = summarize("cell", snap, evaluate(snap), triage(snap))
    assert (row.nodes_total.value, row.not_ready.value) == (100_000, 44_000)
    assert dict(row.zones)["a"] is ZoneState.FULL_DISRUPTION


def test_a_disruption_the_controller_counts_makes_p4_suspect_while_the_list_loads() -> None:
    """A one-shot triage on a large cluster, its node list still loading: the controller's
    zone states name the zone down (zone a: 30,000 of 30,000 not Ready, FullDisruption by
    the controller's rule), instead of waiting for ktop's own count."""
    from ktop.analysis.triage.evaluate import triage
    from ktop.analysis.triage.types import Status, Verdict

    report = triage(_model(_scrape(_cm_text(ZONES)), LISTING).snapshot())
    p4 = next(p for p in report.paths if p.id == "P4")
    zone = next(e for e in p4.evidence if e.id == "nodes.zone_disruption")
    unhealthy = sum(u for _, u in ZONES.values())
    total = sum(size for size, _ in ZONES.values())
    assert zone.status is Status.BAD
    assert f"{unhealthy} of {total} nodes not Ready" in zone.detail
    assert "a FullDisruption" in zone.detail and "node list loading" in zone.detail
    assert p4.verdict is Verdict.SUSPECT
    assert "30000 of 30000 nodes NotReady in zone a" in p4.conclusion
