"""Pure render helpers: units, unknown values, rows and lines from hand-built snapshots."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ktop.model.events import Area, PendingPodRecord, PodWait
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.text import (
    fmt_age,
    fmt_bytes,
    fmt_clock,
    fmt_count,
    fmt_duration,
    fmt_pct,
    fmt_rate,
    fmt_si,
    fmt_times,
    fmt_val,
    truncate,
)
from ktop.model.values import Val
from ktop.ui.render import apf, apiservers, etcd, nodes, scheduler
from ktop.ui.render.areas import drill_view, overview_panel, render_key
from ktop.ui.render.findings import counts, full_text, ranked, strip_lines
from ktop.ui.render.reasons import area_reasons, drill_reason_lines, panel_note, val_reasons
from ktop.ui.render.status import ages, area_age, panel_age, status_line
from ktop.ui.render.view import TableCell, fit, line
from tests.functional.factories import AT, busy_snapshot, findings, v


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0B"),
        (512, "512B"),
        (1536, "1.5KiB"),
        (12 * 2**20, "12.0MiB"),
        (8 * 2**30, "8.0GiB"),
        (300 * 2**30, "300GiB"),
    ],
)
def test_bytes(n: float, text: str) -> None:
    assert fmt_bytes(n) == text


@pytest.mark.parametrize(
    ("s", "text"),
    [
        (0, "0s"),
        (0.00045, "450µs"),
        (0.0042, "4.2ms"),
        (0.612, "612ms"),
        (0.9999, "1.0s"),
        (9.99, "10s"),
        (59.9, "1.0m"),
        (4.2, "4.2s"),
        (42, "42s"),
        (210, "3.5m"),
        (1800, "30m"),
        (7200, "2.0h"),
        (3 * 86400, "3.0d"),
    ],
)
def test_durations(s: float, text: str) -> None:
    assert fmt_duration(s) == text


@pytest.mark.parametrize(
    ("s", "text"),
    [(None, "never"), (0, "0s"), (12.7, "12s"), (190, "3m"), (7300, "2h"), (90000, "1d")],
)
def test_ages(s: float | None, text: str) -> None:
    assert fmt_age(s) == text


def test_rates_counts_percentages() -> None:
    assert fmt_rate(0) == "0/s"
    assert fmt_rate(0.3) == "0.3/s"
    assert fmt_rate(812) == "812/s"
    assert fmt_rate(1234) == "1.2k/s"
    assert fmt_si(34_000) == "34k"
    assert fmt_si(2_500_000) == "2.5M"
    assert fmt_count(1234) == "1,234"
    assert fmt_pct(0) == "0%"
    assert fmt_pct(0.045) == "4.5%"
    assert fmt_pct(0.5) == "50%"
    assert fmt_times(1.68) == "1.7x"


def test_unknown_and_lifetime_values() -> None:
    assert fmt_val(Val.unknown("scrape failed")) == "?"
    assert fmt_val(Val.of(0.612), fmt_duration) == "612ms"
    assert fmt_val(Val.of(0.612, lifetime=True), fmt_duration) == "~612ms"


def test_clock_is_utc_source_time() -> None:
    assert fmt_clock(AT) == "15:06:40"


def test_truncate() -> None:
    assert truncate("workload-low", 12) == "workload-low"
    assert truncate("workload-low", 8) == "workloa…"


def test_line_flex_column_and_width() -> None:
    out = line([TableCell("name", 0, "left"), TableCell("12", 4), TableCell("3s", 4)], 20)
    assert out.plain == "name         12   3s"
    assert len(line([TableCell("a-very-long-name", 0, "left"), TableCell("1", 3)], 10).plain) <= 10


def test_fit_keeps_note_and_counts_hidden_lines() -> None:
    from rich.text import Text

    body = [Text(f"row {i}") for i in range(6)]
    out = fit(body, Text("? why"), 5, Text("hdr"))
    assert [t.plain for t in out] == ["hdr", "row 0", "row 1", "  +4 more", "? why"]
    assert len(fit(body, None, 10)) == 6


def test_val_reasons_prefixes_instance_and_dedups() -> None:
    reasons = val_reasons(busy_snapshot().etcd)
    # the instance is not repeated when the reason already names it
    # the row's own error comes before the reasons of its values
    assert reasons == ("etcd-1: connection refused", "scrape of etcd-1 failed: connection refused")


def test_area_reasons_merge_failed_inputs() -> None:
    snap = busy_snapshot()
    assert area_reasons(snap, Area.ETCD) == ("etcd-1: connection refused",)
    assert area_reasons(snap, Area.NODES) == ()
    note = panel_note(snap, Area.ETCD, 36)
    assert note is not None and note.plain == "? failed: etcd-1: connection refused"


def test_panel_note_shortens_go_errors() -> None:
    from ktop.model.snapshot import Freshness

    error = 'Get "https://apiserver-1:6443/metrics": dial tcp apiserver-1:6443: connect: refused'
    fresh = (Freshness("apiserver apiserver-1:6443", Area.APISERVERS, AT - 10, error=error),)
    snap = replace(busy_snapshot(), freshness=fresh)
    note = panel_note(snap, Area.APISERVERS, 38)
    assert note is not None and note.plain == "? failed: apiserver-1: refused"
    lines = [t.plain for t in drill_reason_lines(snap, Area.APISERVERS)]
    assert lines == [f"apiservers: failed: apiserver apiserver-1:6443: {error} (last read 10s ago)"]


def test_drill_reason_line_says_unknown_reason_and_staleness() -> None:
    lines = [t.plain for t in drill_reason_lines(busy_snapshot(), Area.ETCD)]
    assert lines == ["etcd: failed: etcd-1: connection refused (last read 2m ago)"]


def test_apf_panel_worst_first_with_rejections() -> None:
    snap = busy_snapshot()
    view = apf.panel(snap.apf, None, 6, 38)
    assert view.title.plain == "APF ✖ 343 queued · 12/s rejected"
    assert view.lines[0].plain.split() == ["level", "inq", "seats", "p99", "rej"]
    assert view.lines[1].plain.split() == ["workload-low", "▲340", "▲98%", "▲4.2s", "✖12"]
    wide = apf.panel(snap.apf, None, 10, 78)
    assert "120/s" in wide.lines[1].plain and "1.1s" in wide.lines[1].plain


def test_apf_tables_by_level_flow_and_instance() -> None:
    levels, talkers, flows, instances = apf.tables(busy_snapshot().apf)
    assert talkers.key == "talkers" and talkers.rows == ()  # no request dump read
    assert talkers.empty.startswith("unknown: ")
    assert [r.key for r in levels.rows][:2] == ["workload-low", "global-default"]
    assert levels.rows[0].cells[0].plain == "✖"
    assert levels.rows[0].cells[-1].plain == "queue-full 10/s, time-out 2/s"
    assert flows.rows[0].key == "workload-low/service-accounts"
    assert [r.key for r in instances.rows] == [f"apiserver-{i}/workload-low" for i in range(3)]


def test_apiservers_panel_shows_restart_and_skew() -> None:
    snap = busy_snapshot()
    view = apiservers.panel(snap.apiservers, snap.at, None, 6, 38)
    assert view.title.plain == "apiservers ▲ 3/3 up · skew 2.7x"
    assert view.lines[3].plain.split() == ["apiserver-2", "300/s", "52", "3.1k", "▲2m"]
    (table,) = apiservers.tables(snap.apiservers, snap.at)
    assert [c.key for c in table.columns][1:] == [f"i:apiserver-{i}" for i in range(3)]
    rows = {r.key: [c.plain for c in r.cells] for r in table.rows}
    assert rows["requests"] == ["requests/s", "1.5k/s", "800/s", "300/s"]
    assert rows["write_p99"][1] == "45ms"


@pytest.mark.parametrize("registered", [2, 3, 4, 5])
def test_more_registered_apiservers_than_read_is_marked_unknown(registered: int) -> None:
    api = busy_snapshot().apiservers
    read = len(api.instances)  # the factory's three real instances
    line = apiservers.summary_line(replace(api, identities=registered)).plain
    assert f"{registered} apiserver identity lease(s)" in line
    assert (f"? {registered} registered, {read} read" in line) is (registered > read), line


def test_etcd_panel_marks_leader_and_unknown() -> None:
    snap = busy_snapshot()
    view = etcd.panel(snap.etcd, None, 6, 38)
    assert view.title.plain == "etcd ✖ leader etcd-0 · 1 change"
    plain = [t.plain.split() for t in view.lines]
    assert plain[1] == ["etcd-0*", "4.0ms", "8.0ms", "50%"]
    assert plain[2] == ["etcd-1", "?", "?", "?"]
    assert plain[3] == ["etcd-2", "▲612ms", "✖1.2s", "50%"]
    members, *client = etcd.tables(snap.etcd, snap.at)
    # The apiservers' view has its tables even when empty (they say why).
    assert [t.key for t in client] == ["etcd-clients", "etcd-requests", "etcd-objects"]
    assert all(not t.rows and "no apiserver exposes" in t.empty for t in client)
    dead = next(r for r in members.rows if r.key == "etcd-1")
    assert dead.cells[0].plain == "?" and dead.cells[-1].plain == "? connection refused"


def test_etcd_no_leader_is_critical() -> None:
    snap = busy_snapshot()
    view = etcd.panel(replace(snap.etcd, leader=""), None, 6, 38)
    assert "NO LEADER" in view.title.plain and view.title.plain.startswith("etcd ✖")


def test_scheduler_keeps_gated_and_quota_apart() -> None:
    snap = busy_snapshot()
    view = scheduler.panel(snap.scheduler, None, 5, 38)
    plain = [t.plain for t in view.lines]
    assert view.title.plain == "scheduler ▲ 1,252 pending · bound 12/s · oldest 12m"
    assert plain[1] == "gated 40 · quota-rej 3 (admission)"
    assert plain[2].split() == ["1,100", "Insufficient", "cpu"]
    reasons, waits, _queues, quotas, _pending = scheduler.tables(snap.scheduler, snap.at)
    assert reasons.rows[0].cells[3].plain == "batch/job-1, batch/job-2"
    assert quotas.rows == () and quotas.empty == "? ResourceQuotas not read"
    by_key = {r.key: r.cells[1].plain for r in waits.rows}
    assert by_key == {
        "unschedulable": "1,200",
        "scheduler-error": "0",
        "not-attempted": "5",
        "bound-not-started": "7",
        "gated": "40",
        "quota": "3",
    }


def test_scheduler_unknown_pods() -> None:
    snap = busy_snapshot()
    sched = replace(snap.scheduler, pods_known=False, pods_reason="pending-pods feed failed")
    assert scheduler.panel(sched, None, 5, 38).title.plain.startswith("scheduler ? ? pending")


def test_nodes_panel_zone_states() -> None:
    snap = busy_snapshot()
    view = nodes.panel(snap.nodes, None, 5, 78)
    assert view.title.plain == "nodes ✖ 399/600 ready · 201 not ready · max lease lag 3.0m"
    rows = [t.plain.split() for t in view.lines[1:4]]
    assert rows[0] == ["✖", "zone-a", "0/200", "▲200", "✖FullDisruption", "✖3.0m"]
    # one unhealthy node: the row's mark is its worst cell's (▲1), never ✓ beside it
    assert rows[1] == ["▲", "zone-b", "199/200", "▲1", "Normal", "9.0s"]
    zones, racks, not_ready = nodes.tables(snap.nodes, snap.at)
    assert [c.plain for c in zones.rows[0].cells[:4]] == ["✖", "-", "zone-a", "✖ FullDisruption"]
    assert racks.all_rows()[0].key == "zone-a/rack-01"
    assert not_ready.all_rows()[0].cells[4].plain == "3m"
    assert not_ready.all_rows()[0].cells[6].plain == "unreachable"


def test_partial_disruption_is_warning() -> None:
    snap = busy_snapshot()
    zone = replace(snap.nodes.zones[0], state=ZoneState.PARTIAL_DISRUPTION, ready=50)
    view = nodes.panel(replace(snap.nodes, zones=(zone,)), None, 5, 78)
    # the state cell is a warning; the row's mark is the worst of its cells (its lag too)
    assert "▲PartialDisruption" in view.lines[1].plain
    assert view.lines[1].plain.split()[0] in ("▲", "✖")


def test_fit_counts_lines_not_built_in_the_hidden_ones() -> None:
    from rich.text import Text

    # 30 rows exist, only the first 8 were built: the same lines show as with all 30 built.
    rows = [Text(f"row {i}") for i in range(30)]
    built = fit(rows[:8], Text("? why"), 6, Text("hdr"), unbuilt=22)
    whole = fit(rows, Text("? why"), 6, Text("hdr"))
    assert [t.plain for t in built] == [t.plain for t in whole]
    assert built[-2].plain == "  +27 more"  # 30 rows, 3 shown


def test_status_line_fits_80_columns() -> None:
    snap = busy_snapshot()
    out = status_line(snap, findings(), 80)
    assert len(out.plain) <= 80
    assert out.plain.startswith("demo sim/zone-out")
    assert "15:06:40Z" in out.plain
    assert "etcd ✖2m" in out.plain and "nodes 1s" in out.plain  # etcd-1 fails
    assert out.plain.endswith("✖1 ▲1 ?1")
    wide = status_line(snap, findings(), 160).plain
    assert wide.startswith("demo sim/zone-outage │ 15:06:40Z │ apf 2s api 2s etcd ✖2m")


@pytest.mark.parametrize(
    ("later_s", "shown"), [(0, "<5s"), (3, "5s"), (5, "5s"), (12, "10s"), (40, "40s")]
)
def test_panel_ages_step_by_five_seconds_while_fresh(later_s: float, shown: str) -> None:
    # busy_snapshot's APF data is 2 s old at AT.
    snap = replace(busy_snapshot(), at=AT + later_s)
    assert panel_age(snap, Area.APF) == (shown, False)
    assert area_age(snap, Area.APF) == (f"{2 + later_s:.0f}s", False)  # the status line's


def test_panel_ages_exact_when_stale_or_coarse() -> None:
    snap = busy_snapshot()  # etcd-1 refuses, its data 2 minutes old: failed
    assert panel_age(snap, Area.ETCD) == ("failed 2m", True)
    # low bandwidth: a real age in 15 s steps (APF's data is 2 s old, then 47 s)
    assert panel_age(snap, Area.APF, coarse=True) == ("<15s", False)
    later = replace(snap, at=snap.at + 45)
    assert panel_age(later, Area.APF, coarse=True) == ("45s", False)
    assert area_age(later, Area.APF, coarse=True) == ("45s", False)


def test_ages_never_when_no_data() -> None:
    snap = busy_snapshot()  # a source that started long ago and never delivered
    snap = replace(snap, freshness=(), started_at=snap.at - 1000)
    assert ages(snap).plain == "apf ✖never api ✖never etcd ✖never sched ✖never nodes ✖never"


def test_findings_ranked_and_strip() -> None:
    found = findings()
    assert [f.code for f in ranked(found)] == ["KT-NODE-001", "KT-ETCD-003", "KT-ETCD-010"]
    assert counts(found).plain == "✖1 ▲1 ?1"
    assert counts(()).plain == "✓ no findings"
    two = [t.plain for t in strip_lines(found, 2, 80)]
    assert two[0].startswith("✖ KT-NODE-001 zone-a in FullDisruption")
    assert two[1] == "  +2 more — press f for all"
    one = strip_lines(found, 1, 60)[0].plain
    assert one.endswith("(+2, f)") and len(one) <= 60
    text = full_text(found, AT).plain
    assert "· zone-a ready 0/200" in text and "KT-ETCD-010" in text
    # none of these findings carries a signal: each says it has no history
    assert text.count("no history for this finding") == 3


def test_dispatch_and_render_keys() -> None:
    snap = busy_snapshot()
    for area in Area:
        assert overview_panel(snap, area, 6, 38).lines
        tables = drill_view(snap, area).tables
        assert tables
        for table in tables:
            assert all(len(row.cells) == len(table.columns) for row in table.rows), table.key
    later = replace(snap, at=snap.at + 1, seq=2)
    assert render_key(later, Area.APF) == render_key(snap, Area.APF)
    assert render_key(later, Area.NODES) == render_key(snap, Area.NODES)
    assert render_key(later, Area.NODES, drill=True) != render_key(snap, Area.NODES, drill=True)
    assert render_key(later, Area.APISERVERS) != render_key(snap, Area.APISERVERS)


def test_unknown_shows_question_mark_in_panels() -> None:
    snap = busy_snapshot()
    api = replace(snap.apiservers.instances[0], requests_per_s=Val.unknown("no rate yet"))
    snap = replace(snap, apiservers=replace(snap.apiservers, instances=(api,)))
    view = overview_panel(snap, Area.APISERVERS, 6, 38)
    assert view.lines[1].plain.split()[:2] == ["apiserver-0", "?"]
    assert view.lines[-1].plain == "? apiserver-0: no rate yet"
    assert v(1).known


def test_quotas_near_their_limits_are_listed_with_units() -> None:
    from ktop.model.snapshot_scheduler import QuotaUsage

    snap = busy_snapshot()
    sched = replace(
        snap.scheduler,
        quotas_known=True,
        quotas_near_limit=(
            QuotaUsage("ml", "gpu", "requests.nvidia.com/gpu", 64, 64),
            QuotaUsage("web", "compute", "limits.memory", 0.95 * 2**40, 2**40),
        ),
    )
    quotas = scheduler.tables(sched, snap.at)[3]
    cells = [[c.plain for c in r.cells] for r in quotas.rows]
    assert cells[0] == ["ml/gpu", "requests.nvidia.com/gpu", "64", "64", "▲100%"]
    assert cells[1][0:2] == ["web/compute", "limits.memory"] and cells[1][3] == "1.0TiB"
    assert cells[1][4] == "95%"


def test_nothing_to_measure_is_a_dash_not_unknown() -> None:
    from ktop.model.signals_apf import APF_WAIT_P99_S
    from ktop.model.text import fmt_val
    from ktop.model.values import Val
    from ktop.ui.render.level import Level, reading_level
    from ktop.ui.render.reasons import val_reasons

    idle = Val.nothing("no request waited")
    assert fmt_val(idle) == "-" and reading_level(APF_WAIT_P99_S, idle) is Level.NEUTRAL
    assert val_reasons((idle,)) == ()
    gone = Val.unknown("scrape failed")
    assert fmt_val(gone) == "?" and reading_level(APF_WAIT_P99_S, gone) is Level.UNKNOWN
    assert val_reasons((gone,)) == ("scrape failed",)


def test_cost_line_names_every_destination() -> None:
    from ktop.sources.live.cost import CostMeter
    from ktop.ui.render.cost import cost_line

    meter = CostMeter()
    for dest, n, size in (("apiserver", 3, 100), ("prometheus", 2, 2048), ("etcd e0:2379", 1, 0)):
        for _ in range(n):
            meter.sent(dest)
            meter.request("/x", {}, 200, dest)
            meter.received(size, dest)
    line_ = cost_line(meter.sample(10.0, {}))
    assert line_ is not None
    assert "6 requests so far (apiserver 3 (300B), etcd e0:2379 1 (0B), prometheus 2 (4.0KiB))" in (
        line_.plain
    )


def test_every_pending_pod_is_listed_oldest_first_with_its_main_reason() -> None:

    snap = busy_snapshot()
    msg = (
        "0/50 nodes are available: 3 node(s) had untolerated taint {x: y}, "
        "47 Insufficient cpu. preemption: 0/50 nodes are available."
    )
    pods = tuple(
        PendingPodRecord("batch", f"job-{i:04d}", snap.at - 600 + i, PodWait.UNSCHEDULABLE, "", msg)
        for i in range(900)
    )
    spec = scheduler.tables(replace(snap.scheduler, pending_pods=pods), snap.at)[4]
    assert spec.lazy is not None and spec.lazy.count == 900
    first, last = spec.lazy.row(0), spec.lazy.row(899)
    assert [c.plain for c in first.cells] == [
        "batch",
        "job-0000",
        "unschedulable",
        "10m",
        "Insufficient cpu",
    ]
    assert last.key == "batch/job-0899"
    assert [i for i in range(900) if "job-0777" in spec.lazy.search(i)] == [777]
