"""Rows order by what the screen prints: jitter below the printed precision never swaps
two rows (ties go by name), and the worst rows come first in every list of problems: the
APF tables and the overview panel (the per-instance table included), the top talkers,
racks, etcd requests and objects, quotas, plugins, findings and fleet cells.

Each expected order is written out by hand from the rule, never computed by the code
under test.
"""

from __future__ import annotations

from dataclasses import replace

from ktop.analysis.findings import Finding, Severity
from ktop.analysis.fleet import CellSummary, rank
from ktop.model.cluster import ClusterModel
from ktop.model.events import ApfRequestsRead, ApfTalker, Area
from ktop.model.snapshot_apf import ApfRow, ApfSnapshot
from ktop.model.snapshot_etcd import EtcdApiserverView, EtcdRequestRow
from ktop.model.snapshot_nodes import DomainRollup, rack_order
from ktop.model.snapshot_scheduler import MetricsOnlyScheduler, QuotaUsage
from ktop.model.values import Val
from ktop.ui.render import etcd, findings, metrics_only, nodes, scheduler
from ktop.ui.render.apf import panel, shown_order, tables, talkers_table
from ktop.ui.render.view import TableSpec
from tests.functional.factories import apf_row
from tests.functional.factories import nodes as nodes_snapshot
from tests.functional.factories import scheduler as scheduler_snapshot


def _names(rows: list[ApfRow]) -> list[str]:
    return [r.priority_level for r in rows]


def test_jitter_the_screen_does_not_show_never_swaps_rows() -> None:
    # 3.27 s and 3.31 s both print as 3.3s; 4 and 4 queued: a tie, broken by name
    first = [apf_row("b-level", in_queue=4, p99=3.31), apf_row("a-level", in_queue=4, p99=3.27)]
    second = [apf_row("b-level", in_queue=4, p99=3.26), apf_row("a-level", in_queue=4, p99=3.32)]
    assert _names(shown_order(first)) == _names(shown_order(second)) == ["a-level", "b-level"]


def test_a_printed_difference_orders_worst_first() -> None:
    rows = [
        apf_row("quiet", p99=0.001),
        apf_row("queued", in_queue=12, p99=2.0),
        apf_row("rejecting", in_queue=3, p99=0.5, rejected={"queue-full": 4.0}),
    ]
    assert _names(shown_order(rows)) == ["rejecting", "queued", "quiet"]


def test_the_saturated_level_leads_the_per_instance_table_and_the_panel() -> None:
    calm = [apf_row(f"level-{i:02d}", instance=f"api-{j}") for i in range(8) for j in range(3)]
    hot = [
        apf_row("workload-low", instance=f"api-{j}", in_queue=40, rejected={"time-out": 2.0})
        for j in range(3)
    ]
    levels = [apf_row(f"level-{i:02d}") for i in range(8)]
    levels.append(apf_row("workload-low", in_queue=120, rejected={"time-out": 6.0}))
    apf = ApfSnapshot(tuple(levels), (), tuple(calm + hot))
    per_instance = next(t for t in tables(apf) if t.key == "instances")
    assert [r.key.split("/")[1] for r in per_instance.rows[:3]] == ["workload-low"] * 3
    view = panel(apf, None, rows=4, width=80)
    body = [line.plain for line in view.lines]
    header = next(i for i, line in enumerate(body) if "inq" in line)
    assert body[header + 1].split()[0] == "workload-low", body


def _keys(table: TableSpec) -> list[str]:
    return [r.key for r in table.all_rows()]


def _table(specs: tuple[TableSpec, ...], key: str) -> TableSpec:
    return next(t for t in specs if t.key == key)


# ---------------------------------------------------------------- racks


def _rack(name: str, *, unhealthy: int = 0, lag: float = 8.0) -> DomainRollup:
    return DomainRollup("", "zone-a", name, 40, 40 - unhealthy, unhealthy, 0, 0,
                        Val.of(lag), Val.of(lag / 2))  # fmt: skip


def _rack_order(*racks: DomainRollup) -> tuple[list[str], list[str]]:
    """The racks table's order and the overview panel's (racks with unhealthy nodes), the
    racks ordered by the model (:func:`rack_order`, as :func:`build_nodes` does).
    """
    snap = replace(nodes_snapshot(), racks=rack_order(racks))
    table = _table(nodes.tables(snap, 0.0), "racks")
    body = [line.plain for line in nodes.panel(snap, None, rows=30, width=100).lines]
    start = next(i for i, line in enumerate(body) if "racks with unhealthy" in line)
    listed = [line.split()[1] for line in body[start + 1 :] if line.strip()]
    return [k.rsplit("/", 1)[1] for k in _keys(table)], listed


def test_racks_whose_lag_prints_the_same_keep_their_order() -> None:
    # 7.91 s .. 7.94 s all print 7.9s: a tie, broken by name, whichever way the jitter went
    first = _rack_order(
        _rack("rack-b", unhealthy=1, lag=7.94), _rack("rack-a", unhealthy=1, lag=7.91)
    )
    second = _rack_order(
        _rack("rack-a", unhealthy=1, lag=7.93), _rack("rack-b", unhealthy=1, lag=7.92)
    )
    assert first == second == (["rack-a", "rack-b"], ["rack-a", "rack-b"])


def test_racks_worst_first_unhealthy_then_shown_lag_then_name() -> None:
    racks = (
        _rack("rack-a", lag=3.0),
        _rack("rack-b", unhealthy=1, lag=2.0),
        _rack("rack-c", unhealthy=1, lag=9.0),  # same count as b, more lag: before b
        _rack("rack-d", unhealthy=5, lag=1.0),  # the most unhealthy: first
        _rack("rack-e", lag=3.04),  # prints 3.0s like rack-a: by name, after it
        _rack("rack-f", lag=30.0),  # healthy: after every rack with unhealthy nodes
    )
    table, panel_racks = _rack_order(*racks)
    assert table == ["rack-d", "rack-c", "rack-b", "rack-f", "rack-a", "rack-e"]
    assert panel_racks == ["rack-d", "rack-c", "rack-b"]


# ---------------------------------------------------------------- etcd (apiservers' view)


def _etcd_tables(
    requests: tuple[EtcdRequestRow, ...], objects: tuple[tuple[str, Val], ...]
) -> tuple[list[str], list[str]]:
    view = EtcdApiserverView((), requests, objects, Val.of(1e9))
    specs = etcd.client_tables(view)
    return _keys(_table(specs, "etcd-requests")), _keys(_table(specs, "etcd-objects"))


def _req(resource: str, p99: float | None, rps: float = 5.0, op: str = "list") -> EtcdRequestRow:
    p99_s = Val.unknown("not exposed") if p99 is None else Val.of(p99)
    return EtcdRequestRow(resource, op, Val.of(rps), Val.of(0.0), p99_s)


def test_etcd_requests_and_objects_that_print_the_same_keep_their_order() -> None:
    # 12.3 ms and 12.4 ms both print 12ms, 5.02/s and 4.98/s both 5/s; 1,234 and 1,201
    # objects both 1.2k: ties, broken by name
    first = _etcd_tables(
        (_req("pods", 0.0124, 5.02), _req("events", 0.0123, 4.98)),
        (("pods", Val.of(1234)), ("events", Val.of(1201))),
    )
    second = _etcd_tables(
        (_req("events", 0.0124, 5.02), _req("pods", 0.0123, 4.98)),
        (("events", Val.of(1234)), ("pods", Val.of(1201))),
    )
    assert first == second == (["events/list", "pods/list"], ["events", "pods"])


def test_etcd_requests_slowest_first_then_busiest_then_name() -> None:
    requests, objects = _etcd_tables(
        (
            _req("configmaps", 0.002, 50),
            _req("pods", 0.3),
            _req("leases", 0.002, 80),  # as slow as configmaps (2.0ms), busier: before it
            _req("events", None, 50, op="create"),  # unknown p99: last,
        ),
        (("pods", Val.of(10)), ("events", Val.unknown("could not count")), ("nodes", Val.of(900))),
    )
    assert requests == ["pods/list", "leases/list", "configmaps/list", "events/create"]
    assert objects == ["nodes", "pods", "events"]  # unknown last


# ---------------------------------------------------------------- quotas, plugins


def _quota_keys(*quotas: QuotaUsage) -> list[str]:
    snap = replace(scheduler_snapshot(), quotas_near_limit=quotas, quotas_known=True)
    return _keys(scheduler.quota_table(snap))


def test_quotas_that_print_the_same_share_keep_their_order() -> None:
    # 95.3 % and 95.1 % both print 95%: by name; 100 % is fuller and leads
    first = _quota_keys(
        QuotaUsage("b", "q", "pods", 95.3, 100), QuotaUsage("a", "q", "pods", 95.1, 100),
        QuotaUsage("c", "q", "pods", 10, 10),
    )  # fmt: skip
    second = _quota_keys(
        QuotaUsage("a", "q", "pods", 95.4, 100), QuotaUsage("c", "q", "pods", 10, 10),
        QuotaUsage("b", "q", "pods", 95.0, 100),
    )  # fmt: skip
    assert first == second == ["c/q/pods", "a/q/pods", "b/q/pods"]


def test_plugins_that_print_the_same_count_go_by_name() -> None:
    view = MetricsOnlyScheduler(
        "--metrics-only",
        (("TaintToleration", Val.of(3.2)), ("NodeAffinity", Val.of(2.9)),
         ("NodeResourcesFit", Val.of(40))),
        "",
        (),
    )  # fmt: skip
    rows = _keys(_table(metrics_only.scheduler_tables(scheduler_snapshot(), view), "plugins"))
    assert rows == ["NodeResourcesFit", "NodeAffinity", "TaintToleration"]  # 40, then 3 and 3


# ---------------------------------------------------------------- talkers


def _talker(level: str, user: str, seats: int, waiting: int = 0) -> ApfTalker:
    return ApfTalker(level, "fs", user, "", 1, seats, waiting, waiting, 0.0, "list pods")


def _talker_keys(*readings: tuple[ApfTalker, ...]) -> list[str]:
    m = ClusterModel()
    for i, talkers in enumerate(readings):
        m.apply(ApfRequestsRead(100.0 + 10 * i, "api-0", talkers, len(talkers), True))
    m.now = 100.0 + 10 * (len(readings) - 1)
    return _keys(talkers_table(m.snapshot().apf.talkers))


def test_talkers_whose_means_print_the_same_go_by_name() -> None:
    # zed holds 12, 12, 13 seats (mean 12.3), amy 12 each time: both print 12
    readings = [
        (_talker("wl", "zed", 12), _talker("wl", "amy", 12)),
        (_talker("wl", "zed", 12), _talker("wl", "amy", 12)),
        (_talker("wl", "zed", 13), _talker("wl", "amy", 12)),
    ]
    assert _talker_keys(*readings) == ["wl/amy", "wl/zed"]


def test_talkers_the_level_that_queues_most_first_then_the_heaviest_client() -> None:
    readings = [
        (
            _talker("calm", "big", 50),
            _talker("hot", "light", 1, waiting=3),
            _talker("hot", "heavy", 20, waiting=10),
        ),
    ]
    assert _talker_keys(*readings) == ["hot/heavy", "hot/light", "calm/big"]


# ---------------------------------------------------------------- findings, fleet


def _finding(code: str, subject: str, severity: Severity = Severity.WARNING) -> Finding:
    return Finding(code, severity, Area.APF, f"{code} on {subject}",
                   signal=f"apf.wait_p99_s/{subject}")  # fmt: skip


def test_findings_of_one_code_go_by_subject_whatever_order_the_rules_found_them() -> None:
    found = [
        _finding("KT-APF-002", "workload-low"),
        _finding("KT-APF-002", "global-default"),
        _finding("KT-APF-001", "workload-low", Severity.CRITICAL),
        _finding("KT-APF-002", "catch-all"),
    ]
    expected = ["workload-low", "catch-all", "global-default", "workload-low"]
    for order in (found, found[::-1]):
        assert [f.title.split()[-1] for f in findings.ranked(order)] == expected


def _cell(name: str, not_ready: float, rejected: float) -> CellSummary:
    return CellSummary(name, Severity.CRITICAL, not_ready=Val.of(not_ready),
                       apf_rejected_per_s=Val.of(rejected))  # fmt: skip


def test_fleet_cells_whose_numbers_print_the_same_go_by_name() -> None:
    # 1,234 and 1,201 NotReady both print 1.2k, 10.3/s and 10.4/s both 10/s
    first = rank([_cell("b", 1234, 10.4), _cell("a", 1201, 10.3), _cell("c", 1300, 0)])
    second = rank([_cell("a", 1240, 10.4), _cell("c", 1300, 0), _cell("b", 1201, 10.3)])
    assert [c.name for c in first] == [c.name for c in second] == ["c", "a", "b"]


def test_the_model_orders_racks_as_the_screen_prints_them() -> None:
    from ktop.hub import Hub
    from ktop.model.text import fmt_duration
    from ktop.sources.sim.simulator import Simulator

    sim = Simulator("zone-outage", nodes=600, seed=5)
    hub = Hub()
    hub.ingest(sim.start())
    for _ in range(240):
        hub.ingest(sim.advance(1.0))
    racks = hub.latest.snapshot.nodes.racks
    assert sum(1 for r in racks if r.unhealthy) >= 2, "the outage must hit racks (or void)"

    def printed(r: DomainRollup) -> tuple[int, float, str, str, str]:
        value = r.lease_lag_max_s.value
        lag = None if value is None else fmt_duration(value)
        scale = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
        shown = -1.0
        if lag is not None:
            unit = lag.lstrip("0123456789.")
            shown = float(lag[: len(lag) - len(unit)]) * scale.get(unit, 1.0)
        return (-r.unhealthy, -shown, r.region, r.zone, r.rack)

    keys = [printed(r) for r in racks]
    assert keys == sorted(keys)
