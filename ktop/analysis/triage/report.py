"""The triage report as JSON (version 1.2, ``docs/triage-json.md``), text and Markdown.

Each starts with the diagnosis: the probable cause (or no incident), then the paths in
the diagnosis' order. In JSON, ``null`` means unknown. Signals are the computed numbers the paths
rest on, per zone, priority level, apiserver and etcd member. An error that stops
triage is a JSON document too (:func:`error_json`), so that a script can read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ktop.analysis.trends import Trend, describe
from ktop.analysis.triage.diagnosis import Headline, explained_words, headline
from ktop.analysis.triage.types import Evidence, PathResult, Role, TriageReport
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.values import Val

JSON_VERSION = 1
"""Changes only when a field changes meaning or disappears."""
JSON_MINOR_VERSION = 2
"""Counts the additions since (1: evidence ``note``, top-level ``error``, the error document;
2: ``headline``, ``cause``, ``independent``, the paths' ``role``, ``explained_by``, ``onset``)."""
QUEUES = ("active", "backoff", "unschedulable", "gated")


def _f(v: Val) -> float | None:
    return v.value


def _i(v: Val) -> int | None:
    return None if v.value is None else round(v.value)


def _b(v: Val) -> bool | None:
    return None if v.value is None else v.value >= 1


def _zone_state(state: ZoneState | None) -> str | None:
    return None if state is None else state.value


def signals(
    snap: ClusterSnapshot, windows: Mapping[str, float | None] | None = None
) -> dict[str, Any]:
    """The computed numbers, by the names the JSON contract fixes.

    ``windows`` gives, per metrics instance, the seconds between its first and
    last sample (None for a single scrape: lifetime values).
    """
    windows = windows or {}
    n = snap.nodes
    nodes: dict[str, Any] = {
        "total": n.total if n.nodes_known else None,
        "not_ready": (n.not_ready + n.unknown) if n.nodes_known else None,
        "zones": [
            {
                "region": z.region,
                "zone": z.zone,
                "total": z.total,
                "not_ready": z.unhealthy,
                "state": _zone_state(z.state),
                "lease_lag_max_s": _f(z.lease_lag_max_s),
            }
            for z in n.zones
        ],
        "lease_lag_p99_s": _f(n.lease_lag_p99_s),
        "unknown_reason": "" if n.nodes_known else n.nodes_reason,
    }
    apf = [
        {
            "instance": r.instance,
            "priority_level": r.priority_level,
            "in_queue": _i(r.in_queue),
            "executing": _i(r.executing),
            "rejected_per_s": None
            if r.rejected_total_per_s.value is None
            else r.rejected_total_per_s.value,
            "rejected_per_s_by_reason": {
                k: v.value for k, v in r.rejected_per_s.items() if v.value is not None
            },
            "wait_p99_s": 0.0 if r.wait_p99_s.empty else _f(r.wait_p99_s),
        }
        for r in snap.apf.per_instance
    ]
    apiservers = [
        {
            "instance": r.instance,
            "requests_per_s": _f(r.requests_per_s),
            "inflight": None
            if r.inflight_readonly.value is None or r.inflight_mutating.value is None
            else round(r.inflight_readonly.value + r.inflight_mutating.value),
            "watches": _i(r.watches),
            "cpu_cores": _f(r.cpu_cores),
            "memory_bytes": _i(r.rss_bytes),
            "start_time": _i(r.start_time),
            "throttled_per_s": _f(r.throttled_per_s),
            "error": r.error,
        }
        for r in snap.apiservers.instances
    ]
    etcd = []
    for m in snap.etcd.members:
        w = windows.get(m.instance)
        lifetime = w is None or any(
            v.lifetime for v in (m.leader_changes, m.wal_fsync_p99_s, m.backend_commit_p99_s)
        )
        etcd.append(
            {
                "instance": m.instance,
                "is_leader": _b(m.is_leader),
                "has_leader": _b(m.has_leader),
                "leader_changes": _i(m.leader_changes),
                "wal_fsync_p99_s": _f(m.wal_fsync_p99_s),
                "backend_commit_p99_s": _f(m.backend_commit_p99_s),
                "db_size_bytes": _i(m.db_size_bytes),
                "db_in_use_bytes": _i(m.db_in_use_bytes),
                "quota_bytes": _i(m.quota_bytes),
                "window": "lifetime" if lifetime else w,
                "error": m.error,
            }
        )
    sc = snap.scheduler
    scheduler = {
        "pending_by_queue": {q: _i(sc.queue.get(q, Val.unknown("not exposed"))) for q in QUEUES},
        "pending_by_reason": {(r.wording or r.reason): r.pods for r in sc.reasons}
        if sc.pods_known
        else None,
        "pending_pods_by_wait": {w.value: k for w, k in sc.pending_by_wait.items()}
        if sc.pods_known
        else None,
    }
    return {
        "nodes": nodes,
        "apf": apf,
        "apiservers": apiservers,
        "etcd": etcd,
        "scheduler": scheduler,
    }


def _trend_json(t: Trend | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {
        "since": t.since,
        "since_before_history": t.since_before_history,
        "direction": t.direction.value,
        "change": t.change,
    }


def _evidence_json(e: Evidence) -> dict[str, Any]:
    return {
        "id": e.id,
        "title": e.title,
        "status": e.status.value,
        "value": e.value,
        "unit": e.unit,
        "detail": e.detail,
        "note": e.note,
        "first_line": e.first_line,
        "pane": e.pane.value if e.pane else None,
        "signal": e.signal or None,
        "trend": _trend_json(e.trend),
    }


def _path_json(p: PathResult) -> dict[str, Any]:
    return {
        "id": p.id,
        "title": p.title,
        "verdict": p.verdict.value,
        "role": None if p.role is None else p.role.value,
        "explained_by": list(p.explained_by),
        "onset": p.onset,
        "conclusion": p.conclusion,
        "direction": p.direction,
        "trend": _trend_json(p.trend),
        "evidence": [_evidence_json(e) for e in p.evidence],
    }


def _cause_json(line: Headline) -> dict[str, Any] | None:
    """The probable cause, or None: no incident."""
    c = line.cause
    if c is None:
        return None
    t = c.trend
    return {
        "id": c.id,
        "title": c.title,
        "onset": c.onset,
        "onset_before_history": t is not None and t.since is not None and t.since_before_history,
        "conclusion": c.conclusion,
        "direction": c.direction,
        "explains": list(line.explains),
    }


def to_json(
    report: TriageReport,
    snap: ClusterSnapshot,
    *,
    source: Mapping[str, Any],
    errors: Sequence[str] = (),
    windows: Mapping[str, float | None] | None = None,
) -> dict[str, Any]:
    """The version-1 JSON document."""
    line = headline(report)
    return {
        "version": JSON_VERSION,
        "minor_version": JSON_MINOR_VERSION,
        "source": dict(source),
        "at": snap.at,
        "baseline": report.baseline,
        "error": None,
        "errors": list(errors),
        "headline": line.text(),
        "cause": _cause_json(line),
        "independent": [p.id for p in report.independent],
        "paths": [_path_json(p) for p in report.paths],
        "capacity": [
            {"id": c.id, "title": c.title, "value": c.value, "unit": c.unit, "detail": c.detail}
            for c in report.capacity
        ],
        "signals": signals(snap, windows),
    }


def error_json(error: str, source: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON document of a triage that could not be made (exit 2): the same top-level
    fields, with ``error`` set, no path, and ``null`` where nothing was read.
    """
    return {
        "version": JSON_VERSION,
        "minor_version": JSON_MINOR_VERSION,
        "source": dict(source),
        "at": None,
        "baseline": None,
        "error": error,
        "errors": [error],
        "headline": None,
        "cause": None,
        "independent": [],
        "paths": [],
        "capacity": [],
        "signals": None,
    }


def _value(e: Evidence) -> str:
    if e.value is None:
        return "?"
    unit = "" if e.unit in ("count", "") else f" {e.unit}"
    return f"{e.value:.4g}{unit}"


def _since(t: Trend | None, at: float | None) -> str:
    """``since 12:03:10 (4m ago), getting worse``; empty without a trend."""
    return "" if t is None or at is None else describe(t, at)


MARK = {"suspect": "✖", "unknown": "?", "clear": "✓", "bad": "✖", "warn": "▲", "ok": "✓"}
NOTE_MARK = "i"
"""An ``ok`` reading that is a note (it passed an informational limit): never a ✓."""
ROLE_MARK = {
    Role.CAUSE: "✖",
    Role.INDEPENDENT: "✖",
    Role.CONSEQUENCE: "↳",
    Role.UNKNOWN: "?",
    Role.CLEAR: "✓",
}
ROLE_WORD = {
    Role.CAUSE: "cause",
    Role.INDEPENDENT: "suspect",
    Role.CONSEQUENCE: "explained",
    Role.UNKNOWN: "unknown",
    Role.CLEAR: "clear",
}
"""How each role reads in text, Markdown and on screen: a consequence is 'explained'
(by its cause), never 'suspect' on its own; an independent suspect is 'suspect'."""


def role_of(p: PathResult) -> Role:
    """The path's role (from its verdict when it was never ranked)."""
    if p.role is not None:
        return p.role
    return {"suspect": Role.INDEPENDENT, "unknown": Role.UNKNOWN}.get(p.verdict.value, Role.CLEAR)


def _mark(e: Evidence) -> str:
    return NOTE_MARK if e.note else MARK[e.status.value]


def _status(e: Evidence) -> str:
    return f"{e.status.value} (note)" if e.note else e.status.value


def to_text(report: TriageReport, errors: Sequence[str] = ()) -> str:
    """Plain text: the diagnosis' line, then the cause, its consequences and any
    independent suspect with their evidence, then the other verdicts.
    """
    out: list[str] = [headline(report).text(), ""]
    for p in report.paths:
        role = role_of(p)
        out.append(f"{ROLE_MARK[role]} {p.id:<10} {ROLE_WORD[role]:<9} {p.title}")
        if role is Role.CONSEQUENCE:
            out.append(f"    {explained_words(p)}")
        out.append(f"    {p.conclusion}")
        if since := _since(p.trend, report.at):
            out.append(f"    {since}")
        if role in (Role.CAUSE, Role.INDEPENDENT):
            out.append(f"    first direction: {p.direction}")
        if p.verdict.value == "suspect":
            for e in p.evidence:
                first = "*" if e.first_line else " "
                out.append(f"    {first}{_mark(e)} {e.title}: {_value(e)} ({e.detail})")
                if e.breaching and (since := _since(e.trend, report.at)):
                    out.append(f"        {since}")
    out.append("")
    out.append("capacity:")
    for c in report.capacity:
        v = "?" if c.value is None else f"{c.value:.4g} {c.unit}"
        out.append(f"    {c.title}: {v} ({c.detail})")
    out.append(f"baseline: {report.baseline}")
    for err in errors:
        out.append(f"error: {err}")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: TriageReport, errors: Sequence[str] = ()) -> str:
    """Markdown: the diagnosis' line, a table of the paths in its order, then each
    non-clear path's evidence.
    """
    out = [f"**{_md(headline(report).text())}**", "", "## ktop triage", ""]
    out += ["| path | role | since | conclusion |", "|---|---|---|---|"]
    for p in report.paths:
        role = role_of(p)
        said = p.conclusion
        if role is Role.CONSEQUENCE:
            said = f"{explained_words(p)}; {said}"
        out.append(
            f"| {p.id} {_md(p.title)} | {ROLE_WORD[role]} | "
            f"{_md(_since(p.trend, report.at))} | {_md(said)} |"
        )
    for p in report.paths:
        role = role_of(p)
        if role is Role.CLEAR:
            continue
        out += ["", f"### {p.id}: {_md(p.title)} ({ROLE_WORD[role]})", ""]
        if role is Role.CONSEQUENCE:
            words = _md(explained_words(p))
            out += [f"{words[:1].upper()}{words[1:]}.", ""]
        out += [f"First direction: {_md(p.direction)}", ""]
        out += ["| evidence | status | value | since | detail |", "|---|---|---|---|---|"]
        out += [
            f"| {_md(e.title)}{' (first line)' if e.first_line else ''} | {_status(e)} | "
            f"{_md(_value(e))} | {_md(_since(e.trend, report.at) if e.breaching else '')} | "
            f"{_md(e.detail)} |"
            for e in p.evidence
        ]
    out += ["", "## Capacity", ""]
    out += [
        f"- {c.title}: {'?' if c.value is None else f'{c.value:.4g} {c.unit}'} ({_md(c.detail)})"
        for c in report.capacity
    ]
    out += ["", f"Baseline: {_md(report.baseline)}"]
    if errors:
        out += ["", "## Errors", ""] + [f"- {_md(e)}" for e in errors]
    return "\n".join(out) + "\n"
