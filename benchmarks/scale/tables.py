"""Markdown tables from a results file (pure).

Each function makes one generated block of docs/benchmarks.md or docs/cost.md from the
saved results; ``make docs`` (the registry in ``ktop/docgen.py``) writes them.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.scale.stats import median, spread
from benchmarks.scale.targets import TARGETS
from ktop.docgen import MarkerError  # what a block rewrite raises, for the benchmarks' writers

Results = Mapping[str, Any]
TOOLS = (
    "ktop",
    "ktop (UI)",
    "kubectl get nodes -o json",
    "kubectl get pods -A -o json",
    "k9s",
)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A Markdown table; ``right[i]`` right-aligns column ``i``."""
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _mb(values: Sequence[float]) -> str:
    return spread(values, "{:.1f}", 1e6)


def _nodes(size: Mapping[str, Any]) -> str:
    """``10,000``, or ``10,000 (no racks)`` for a run whose nodes had no rack label."""
    return f"{size['nodes']:,}" + ("" if size.get("racks", True) else " (no racks)")


def _pulled(size: dict[str, Any], tool: dict[str, Any]) -> str:
    """MB pulled; marked when the run counted bytes decoded (runs before 2026-12-04)."""
    cell = _mb(tool.get("bytes", []))
    return cell if cell == "-" or size.get("bytes_on_wire") else f"{cell} (decoded)"


FLOOR = "floor: every node as a Table row without its object (pages of 5,000, bare client)"
"""The row of every node as paged Table rows without objects, served to a bare client: the
smallest representation the API offers (its continued pages are exact reads, which an
apiserver without a cache snapshot serves from etcd: docs/cost.md, "The node list")."""


def start_table(results: Results) -> str:
    """Per size and tool: time to a complete view, bytes, requests, peak memory, steady CPU."""
    rows = []
    for s in results.get("sizes", []):
        label = f"{s['nodes']:,} nodes, {s.get('pods', 0):,} pending pods"
        if not s.get("racks", True):
            label += ", no rack labels"
        for tool in TOOLS:
            t = s.get("tools", {}).get(tool)
            if t is None:
                continue
            if t.get("not_measured"):
                rows.append([label, tool, f"not measured: {t['not_measured']}", "", "", "", "", ""])
                continue
            rows.append(
                [
                    label,
                    tool,
                    spread(t.get("first_answer_s", []), "{:.1f}"),
                    spread(t.get("wall_s", []), "{:.1f}"),
                    _pulled(s, t),
                    spread(t.get("requests", []), "{:.0f}"),
                    spread(t.get("peak_rss_mb", []), "{:.0f}"),
                    spread(t.get("steady_cpu_pct", []), "{:.0f}"),
                ]
            )
        floor = s.get("floor")
        if floor:
            rows.append(
                [
                    label,
                    FLOOR,
                    "",
                    spread(floor["wall_s"], "{:.1f}"),
                    _mb(floor["bytes"]),
                    spread(floor["requests"], "{:.0f}"),
                    "",
                    "",
                ]
            )
    header = [
        "cluster",
        "tool",
        "first answer (s)",
        "time to complete view (s)",
        "MB pulled (on the wire, gzip asked)",
        "requests",
        "peak RSS (MB)",
        "steady CPU (% core)",
    ]
    return table(header, rows, [False, False, True, True, True, True, True, True])


def phases_table(results: Results) -> str:
    """Per size (probe's first run): when each list+watch feed was first synced, when the
    overview was complete, and ktop's own CPU seconds until then.
    """
    rows = []
    for s in results.get("sizes", []):
        t = s.get("tools", {}).get("ktop", {})
        phases = t.get("phases")
        if not phases or not t.get("wall_s"):
            continue
        synced = ", ".join(f"{f} {sec:.1f}" for f, sec in sorted(phases.items(), key=_second))
        cpu = t.get("cpu_s", [])
        rows.append(
            [
                _nodes(s),
                synced,
                f"{t['wall_s'][0]:.1f}",
                f"{cpu[0]:.1f}" if cpu else "-",
                spread(s.get("floor", {}).get("wall_s", []), "{:.1f}"),
            ]
        )
    if not rows:
        return "Not measured yet (runs before 2026-12-05 did not keep the phases).\n"
    header = [
        "nodes",
        "feed first synced (s from start)",
        "complete (s)",
        "ktop CPU until then (s)",
        "floor (s)",
    ]
    return table(header, rows, [True, False, True, True, True])


def _second(item: tuple[str, float]) -> tuple[float, str]:
    return item[1], item[0]


def feeds_table(results: Results) -> str:
    """Per size and feed: what one event costs and the bytes/s at the real rate."""
    rows = []
    for s in results.get("sizes", []):
        # Costliest first, in the run's output and when rewritten from the saved file alike.
        feeds = sorted(
            s.get("feeds", {}).items(), key=lambda kv: (-kv[1]["kb_per_s_real_rate"], kv[0])
        )
        for name, f in feeds:
            rows.append(
                [
                    _nodes(s),
                    name,
                    f"{f['events_per_s']:.1f}",
                    f"{f['bytes_per_event']:,.0f}" if f.get("bytes_per_event") else "-",
                    f"{f['real_events_per_s']:.1f}",
                    f"{f['kb_per_s_real_rate']:.1f}",
                ]
            )
    header = [
        "nodes",
        "feed (as ktop asks for it)",
        "events/s measured",
        "bytes/event",
        "events/s at real rate",
        "KB/s at real rate",
    ]
    return table(header, rows, [True, False, True, True, True, True])


def representations_table(results: Results) -> str:
    """Per size: a whole list of nodes / Leases in each representation the API offers,
    decoded and (in runs that measured it) as sent with gzip asked for.
    """
    rows = []
    for s in results.get("sizes", []):
        wire = s.get("representations_wire", {})
        seconds = s.get("representations_s", {})
        for name, nbytes in sorted(
            s.get("representations", {}).items(), key=lambda kv: (-kv[1], kv[0])
        ):
            per = nbytes / s["nodes"] if s["nodes"] else 0
            sent = f"{wire[name] / 1e6:.1f}" if name in wire else "-"
            took = f"{seconds[name]:.1f}" if name in seconds else "-"
            rows.append([_nodes(s), name, f"{nbytes / 1e6:.1f}", sent, took, f"{per:,.0f}"])
    return table(
        [
            "nodes",
            "list",
            "MB decoded",
            "MB on the wire (gzip)",
            "s to read (one client)",
            "bytes/node decoded",
        ],
        rows,
        [True, False, True, True, True, True],
    )


def memory_table(results: Results) -> str:
    """Per size: where ktop's resident memory goes (source and model without the UI, and
    the whole program).
    """
    rows = []
    for s in results.get("sizes", []):
        probe = s.get("tools", {}).get("ktop", {})
        ui = s.get("tools", {}).get("ktop (UI)", {})
        if not probe.get("rss_imported_mb"):
            continue
        imported = statistics.median(probe["rss_imported_mb"])
        peak = statistics.median(probe["peak_rss_mb"])
        kept = statistics.median(probe["rss_complete_mb"])
        rows.append(
            [
                _nodes(s),
                f"{imported:.0f}",
                f"{kept:.0f}",
                f"{peak - kept:.0f}",
                f"{peak:.0f}",
                f"{statistics.median(ui['peak_rss_mb']):.0f}" if ui.get("peak_rss_mb") else "-",
            ]
        )
    header = [
        "nodes",
        "after the imports (MB)",
        "kept once complete, garbage collected (MB)",
        "transient at the peak (MB)",
        "peak, source and model (MB)",
        "peak, whole program with UI (MB)",
    ]
    return table(header, rows, [True] * 6)


def _idle_quiet(st: dict[str, Any]) -> str:
    """Node events during the idle window and how long the run waited for a quiet watch."""
    if st.get("ktop_ui_idle_node_events") is None:
        return "not counted"
    return f"{st['ktop_ui_idle_node_events']:,} ({st['ktop_ui_idle_quiet_wait_s']:.0f} s)"


def steady_table(results: Results) -> str:
    """Per size: ktop's own measured steady load and CPU."""
    rows = []
    for s in results.get("sizes", []):
        st = s.get("steady", {})
        if not st:
            continue
        rows.append(
            [
                _nodes(s),
                f"{st.get('lease_renewals_per_s', 0):.0f}",
                f"{st.get('ktop_requests_per_s', 0):.2f}",
                f"{st.get('ktop_kb_per_s', 0):.1f}",
                f"{st.get('ktop_kb_per_s_real_rate', 0):.1f}",
                _kb(st.get("ktop_kb_per_s_real_rate_without_metrics")),
                _one(st.get("ktop_ui_idle_cpu_pct")),
                _idle_quiet(st),
            ]
        )
    header = [
        "nodes",
        "Lease renewals/s during the window",
        "ktop requests/s",
        "ktop KB/s measured",
        "ktop KB/s at the kubelet's rate",
        "of which not the instances' /metrics and APF dumps",
        "ktop (UI) CPU with nothing changing (% core)",
        "node events in that window (waited for quiet)",
    ]
    return table(header, rows, [True, True, True, True, True, True, True, True])


def _one(value: float | None) -> str:
    """One decimal, or ``-`` when not measured (the UI run failed)."""
    return "-" if value is None else f"{value:.1f}"


def _kb(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def pure_table(results: Results) -> str:
    """Figures that need no apiserver: model, pipeline, frame time, parsing."""
    p = results.get("pure", {})
    labels = {
        "pipeline_events_per_s": ("watch events ingested per second, one core", "{:,.0f}"),
        "fold_lease_events_per_s": ("Lease renewals folded per second (model only)", "{:,.0f}"),
        "bytes_per_node": ("model bytes per node (record + Lease)", "{:,.0f}"),
        "bytes_per_pending_pod": ("model bytes per pending pod", "{:,.0f}"),
        "overview_frame_ms_100k": ("overview frame at 100,000 nodes (ms)", "{:.1f}"),
        "publish_ms_100k": (
            "publish: snapshot + findings (ms; on the UI loop before, in a worker thread now)",
            "{:.1f}",
        ),
        "publish_history_1min_ms": (
            "publish with triage and timeline, 1,000 nodes, a minute of history (ms)",
            "{:.1f}",
        ),
        "publish_history_1h_ms": (
            "the same with an hour of history (ms)",
            "{:.1f}",
        ),
        "ui_rss_mb_100k": ("resident memory, UI on 100,000 simulated nodes (MB)", "{:.0f}"),
        "parse_mb_per_s": ("apiserver exposition parse (MB/s of text)", "{:.1f}"),
        "parse_ms": ("real 3.1 MB apiserver /metrics parsed (ms)", "{:.0f}"),
    }
    rows = [[label, fmt.format(p[key])] for key, (label, fmt) in labels.items() if key in p]
    for name, ms in sorted(p.get("drill_frame_ms_100k", {}).items()):
        rows.append([f"{name} drill-down frame at 100,000 nodes (ms)", f"{ms:.1f}"])
    return table(["what", "measured"], rows, [False, True])


def targets_table(results: Results) -> str:
    """Every target, the measured value and whether it is met."""
    rows = []
    for t in TARGETS:
        value = t.measured(results)
        verdict = {True: "met", False: "**missed**", None: "not measured"}[t.met(value)]
        shown = "-" if value is None else f"{value:,.2f}"
        limit = f"{'>=' if t.higher_is_better else '<='} {t.limit:,g} {t.unit}"
        rows.append([t.what, limit, f"{shown} {t.unit}" if value is not None else shown, verdict])
    return table(["target", "limit", "measured", ""], rows, [False, True, True, False])


def gains_table(results: Results) -> str:
    """Every target before the fixes (``results["before"]``, the earlier results file) and
    now.
    """
    before = results.get("before", {})
    rows = []
    for t in TARGETS:
        old, new = t.measured(before), t.measured(results)
        if old is None and new is None:
            continue
        shown = ["-" if v is None else f"{v:,.2f} {t.unit}" for v in (old, new)]
        verdict = {True: "met", False: "**missed**", None: "not measured"}[t.met(new)]
        rows.append([t.what, *shown, verdict])
    date = before.get("meta", {}).get("date", "?")
    return (
        f"Before: the run of {date}, kept in `benchmarks/results/scale-before.json`.\n\n"
        + table(["target", "before", "now", ""], rows, [False, True, True, False])
    )


def meta_block(results: Results) -> str:
    """How, where and when the figures were measured."""
    m = results.get("meta", {})
    fewer = [
        f"{s['nodes']:,} nodes{'' if s.get('racks', True) else ' without rack labels'}: {s['runs']}"
        for s in results.get("sizes", [])
        if s.get("runs", m.get("runs")) != m.get("runs")
    ]
    lines = [
        f"Measured {m.get('date', '?')} by `{m.get('command', 'python -m benchmarks.scale')}` "
        f"on {m.get('machine', '?')}; {m.get('runs', '?')} runs per figure"
        + (f" ({'; '.join(fewer)})" if fewer else "")
        + ", shown as median (min-max).",
    ]
    if m.get("contended"):
        lines.append(
            f"**Measured under contention:** {m['contended']}. Wall times and CPU shares are "
            "pessimistic; bytes, requests and memory are not affected."
        )
    if m.get("merged"):
        lines.append(f"Sizes kept from an earlier run: {m['merged']}.")
    if m.get("pure_from"):
        lines.append(f"Figures without an apiserver: from {m['pure_from']}.")
    for key, value in sorted(m.get("versions", {}).items()):
        lines.append(f"- {key}: {value}")
    return "\n".join(lines) + "\n"


def recording_table(results: Results) -> str:
    """Recording size and seek times (``benchmarks/results/recording.json``)."""
    rec = results.get("recording", {})
    m = rec.get("meta", {})
    rows = [
        [
            r["scenario"],
            f"{r['nodes']:,}",
            f"{r['minutes']:g} min",
            f"{r['bytes'] / 1e6:.1f} MB",
            f"{r['mb_per_hour']:.1f} MB/h",
            f"{r['generate_s']:.0f} s",
            f"{r['write_ms_per_s']:.1f} ms",
            f"{r['seek_ms_median'] / 1e3:.2f} s / {r['seek_ms_max'] / 1e3:.2f} s",
            f"{r['folded_max']:,}",
        ]
        for r in rec.get("runs", [])
    ]
    if not rows:
        return "Not measured: run `python -m benchmarks.bench_recording`.\n"
    head = (
        f"Measured {m.get('date', '?')} by `python -m benchmarks.bench_recording` on "
        f"{m.get('cores', '?')} cores, Python {m.get('python', '?')} ({m.get('contended', '')}); "
        f"keyframes every {m.get('keyframe_s', 0):g} s, chunks of {m.get('chunk_s', 0):g} s, "
        f"{m.get('seeks', '?')} seeks per recording, each from a fresh open.\n\n"
    )
    header = [
        "scenario",
        "nodes",
        "recorded",
        "file",
        "per hour",
        "recording took",
        "write per 1 s of events",
        "seek median / slowest",
        "events folded (most)",
    ]
    return head + table(header, rows, [False, *([True] * 8)])


__all__ = ["TOOLS", "MarkerError", "median", "table"]
