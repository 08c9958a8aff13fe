"""The issue's targets, defined once: the targets table in the docs is generated from here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.scale.stats import median

Results = Mapping[str, Any]


@dataclass(frozen=True)
class Target:
    """One target: a limit, and how to read the measured value from a results file."""

    what: str
    limit: float
    unit: str
    measured: Callable[[Results], float | None]
    higher_is_better: bool = False

    def met(self, value: float | None) -> bool | None:
        """True when met, False when missed, None when not measured."""
        if value is None:
            return None
        return value >= self.limit if self.higher_is_better else value <= self.limit


def size(results: Results, nodes: int, racks: bool | None = True) -> Mapping[str, Any]:
    """The figures of one cluster size, its nodes labelled with racks or not (``None``:
    either, with racks first), empty when that size was not run.
    """
    if racks is None:
        return size(results, nodes, True) or size(results, nodes, False)
    for s in results.get("sizes", []):
        if s["nodes"] == nodes and s.get("racks", True) == racks:
            return dict(s)
    return {}


def tool_median(
    results: Results, nodes: int, tool: str, key: str, racks: bool | None = True
) -> float | None:
    """The median of one figure of one tool at one size."""
    values = size(results, nodes, racks).get("tools", {}).get(tool, {}).get(key, [])
    return median(values)


def _ratio(results: Results, key: str, racks: bool = True) -> float | None:
    ktop = tool_median(results, 10_000, "ktop", key, racks)
    kubectl = tool_median(results, 10_000, "kubectl get nodes -o json", key, racks)
    if ktop is None or not kubectl:
        return None
    return ktop / kubectl


def _steady(results: Results, key: str, nodes: int = 10_000) -> float | None:
    """A steady-state figure of the lab without rack labels (the one the current runs
    measure: ktop lists its nodes split by zone there).
    """
    value = size(results, nodes, racks=False).get("steady", {}).get(key)
    return None if value is None else float(value)


def _no_racks(results: Results, nodes: int, key: str) -> float | None:
    """The probe's median of ``key`` at ``nodes`` without rack labels (the split list)."""
    return tool_median(results, nodes, "ktop", key, racks=False)


def _ui_over_probe(results: Results, nodes: int) -> float | None:
    """The UI with every node on screen over the probe's first complete overview."""
    ui = tool_median(results, nodes, "ktop (UI)", "wall_s", racks=False)
    probe = _no_racks(results, nodes, "wall_s")
    return None if ui is None or not probe else ui / probe


def _bytes_over_kubectl(results: Results, nodes: int) -> float | None:
    """The bytes ktop pulled to its first complete overview over `kubectl get nodes -o json`'s (its
    paginated JSON list on the wire, measured whether or not kubectl itself fits beside
    the lab).
    """
    ktop = _no_racks(results, nodes, "bytes")
    s = size(results, nodes, racks=False)
    kubectl = s.get("representations_wire", {}).get("nodes as JSON (kubectl get -o json)")
    return None if ktop is None or not kubectl else ktop / kubectl


def _pure(results: Results, key: str) -> float | None:
    value = results.get("pure", {}).get(key)
    return None if value is None else float(value)


def _slowest(results: Results, key: str) -> float | None:
    """The largest of a figure kept per pane (``None`` when not measured)."""
    per_pane = results.get("pure", {}).get(key, {})
    return max(map(float, per_pane.values())) if per_pane else None


def _rss(results: Results, nodes: int) -> float | None:
    value = tool_median(results, nodes, "ktop (UI)", "peak_rss_mb", racks=None)
    if value is None and nodes == 100_000:
        value = _pure(results, "ui_rss_mb_100k")
    return value


def recording_hour(results: Results) -> Mapping[str, Any]:
    """The one-hour, 10,000-node recording of ``benchmarks/results/recording.json`` (merged
    into the results as ``recording`` when the docs are written; empty when not run).
    """
    for r in results.get("recording", {}).get("runs", []):
        if r["nodes"] == 10_000 and r["minutes"] >= 60:
            return dict(r)
    return {}


def recording_steady(results: Results) -> Mapping[str, Any]:
    """The longest 10,000-node ``steady`` recording (the largest file per hour)."""
    runs = [
        r
        for r in results.get("recording", {}).get("runs", [])
        if r["nodes"] == 10_000 and r["scenario"] == "steady"
    ]
    return dict(max(runs, key=lambda r: r["minutes"])) if runs else {}


def _recording(run: Mapping[str, Any], key: str) -> float | None:
    value = run.get(key)
    return None if value is None else float(value)


TARGETS: tuple[Target, ...] = (
    Target(
        "10,000 nodes: first complete overview, wall time / `kubectl get nodes -o json`'s",
        1.5,
        "x",
        lambda r: _ratio(r, "wall_s"),
    ),
    Target(
        "10,000 nodes: bytes pulled until then / `kubectl get nodes -o json`'s",
        0.20,
        "x",
        lambda r: _ratio(r, "bytes"),
    ),
    Target(
        "10,000 nodes without rack labels (list split by zone): first complete overview, "
        "wall time / `kubectl get nodes -o json`'s",
        1.5,
        "x",
        lambda r: _ratio(r, "wall_s", racks=False),
    ),
    Target(
        "10,000 nodes without rack labels (list split by zone): bytes pulled until then / "
        "`kubectl get nodes -o json`'s",
        0.20,
        "x",
        lambda r: _ratio(r, "bytes", racks=False),
    ),
    Target(
        "100,000 nodes without rack labels: first answer (every area with data)",
        5.0,
        "s",
        lambda r: _no_racks(r, 100_000, "first_answer_s"),
    ),
    Target(
        "100,000 nodes without rack labels: first complete overview (every node)",
        20.0,
        "s",
        lambda r: _no_racks(r, 100_000, "wall_s"),
    ),
    Target(
        "100,000 nodes without rack labels: UI with every node on screen / first complete overview",
        1.3,
        "x",
        lambda r: _ui_over_probe(r, 100_000),
    ),
    Target(
        "10,000 nodes without rack labels: first complete overview (every node)",
        2.0,
        "s",
        lambda r: _no_racks(r, 10_000, "wall_s"),
    ),
    Target(
        "100,000 nodes without rack labels: bytes pulled until then / `kubectl get nodes "
        "-o json`'s",
        0.20,
        "x",
        lambda r: _bytes_over_kubectl(r, 100_000),
    ),
    Target(
        "10,000 nodes without rack labels: steady state from the apiserver (default "
        "settings, kubelet rates)",
        100.0,
        "KB/s",
        lambda r: _steady(r, "ktop_kb_per_s_real_rate"),
    ),
    Target(
        "10,000 nodes without rack labels: the same without the apiservers' /metrics and "
        "APF dumps "
        "(as with `--prometheus`)",
        100.0,
        "KB/s",
        lambda r: _steady(r, "ktop_kb_per_s_real_rate_without_metrics"),
    ),
    Target("10,000 nodes: resident memory, UI included", 150.0, "MB", lambda r: _rss(r, 10_000)),
    Target("100,000 nodes: resident memory, UI included", 400.0, "MB", lambda r: _rss(r, 100_000)),
    Target(
        "watch events ingested per second on one core",
        5_000.0,
        "events/s",
        lambda r: _pure(r, "pipeline_events_per_s"),
        higher_is_better=True,
    ),
    Target(
        "idle CPU when nothing changes (10,000 nodes without rack labels, UI)",
        2.0,
        "% of a core",
        lambda r: _steady(r, "ktop_ui_idle_cpu_pct"),
    ),
    Target(
        "idle CPU when nothing changes (100,000 nodes without rack labels, UI)",
        2.0,
        "% of a core",
        lambda r: _steady(r, "ktop_ui_idle_cpu_pct", nodes=100_000),
    ),
    Target(
        "drill-down frame at 100,000 nodes (the slowest pane)",
        16.0,
        "ms",
        lambda r: _slowest(r, "drill_frame_ms_100k"),
    ),
    Target(
        "overview frame at 100,000 nodes (on the UI loop; publish in a worker thread since)",
        16.0,
        "ms",
        lambda r: _pure(r, "overview_frame_ms_100k"),
    ),
    Target(
        "recording at 10,000 nodes, scrapes every 5 s: bytes per hour (`steady`, longest run)",
        20.0,
        "MB",
        lambda r: _recording(recording_steady(r), "mb_per_hour"),
    ),
    Target(
        "recording: seek in a one-hour recording at 10,000 nodes (slowest of its seeks)",
        100.0,
        "ms",
        lambda r: _recording(recording_hour(r), "seek_ms_max"),
    ),
)
