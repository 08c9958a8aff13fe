"""The triage report as JSON (version 1.2, ``docs/triage-json.md``); its text and
Markdown are rendered by :mod:`ktop.ui.render.triage_text`.

It starts with the diagnosis: the probable cause (or no incident), then the paths in
the diagnosis' order. In JSON, ``null`` means unknown. Signals are the computed numbers the paths
rest on, per zone, priority level, apiserver and etcd member. An error that stops
triage is a JSON document too (:func:`error_json`), so that a script can read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ktop.analysis.trends import Trend
from ktop.analysis.triage.audit_json import audit_json
from ktop.analysis.triage.diagnosis import Headline, headline
from ktop.analysis.triage.timeline import TimelineEvent
from ktop.analysis.triage.types import Evidence, PathResult, Role, TriageReport
from ktop.model.audit_digest import AuditDigest
from ktop.model.events import Area
from ktop.model.extractors import member_value
from ktop.model.reading import JsonKind
from ktop.model.signals import MEMBER_READINGS
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_apf import TalkersView
from ktop.model.snapshot_etcd import EtcdMemberRow
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.snapshot_scheduler import QUEUES
from ktop.model.values import Val

JSON_VERSION = 1
"""Changes only when a field changes meaning or disappears."""
JSON_MINOR_VERSION = 12
"""Counts the additions since (1: evidence ``note``, top-level ``error``, the error document;
2: ``headline``, ``cause``, ``independent``, the paths' ``role``, ``explained_by``, ``onset``;
3: ``timeline``; 4: ``top_talkers``, the apiservers' ``slo`` and ``errors_5xx_per_s``;
5: the SLOs' ``budget_burned`` and ``budget_since``; 6: their ``budget_today``;
7: an infinite metric value written as the string ``"+Inf"`` or ``"-Inf"`` where a number
may be, where the report could not be made before; 8: a live source's ``look_back_s`` and
``look_back_from``; 9: the APF levels' ``wait_p99_reason``, and their ``wait_p99_s`` null,
not 0, when no request waited in the window; 10: ``provider``; 11: ``audit``; 12: the
evidence's ``files``)."""


def _f(v: Val) -> float | None:
    return v.value


def _i(v: Val) -> float | None:
    return None if v.value is None else _whole(v.value)


def _whole(x: float) -> float:
    """``x`` rounded, an infinity kept (:func:`finite_json` writes it as a string)."""
    return round(x) if math.isfinite(x) else x


INFINITY_JSON = "+Inf"
"""How JSON writes an infinite number (JSON has none): as the exposition format does."""


def finite_json(doc: Any) -> Any:
    """``doc`` with every infinite float written ``"+Inf"`` or ``"-Inf"`` and NaN as
    ``null`` (unknown), so that ``json.dumps`` never writes the non-JSON ``Infinity``.
    """
    if isinstance(doc, float) and not math.isfinite(doc):
        if math.isnan(doc):
            return None
        return INFINITY_JSON if doc > 0 else "-" + INFINITY_JSON[1:]
    if isinstance(doc, dict):
        return {k: finite_json(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [finite_json(v) for v in doc]
    return doc


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
            "wait_p99_s": _f(r.wait_p99_s),
            "wait_p99_reason": r.wait_p99_s.reason if r.wait_p99_s.value is None else "",
        }
        for r in snap.apf.per_instance
    ]
    apiservers = [
        {
            "instance": r.instance,
            "requests_per_s": _f(r.requests_per_s),
            "inflight": None
            if r.inflight_readonly.value is None or r.inflight_mutating.value is None
            else _whole(r.inflight_readonly.value + r.inflight_mutating.value),
            "watches": _i(r.watches),
            "cpu_cores": _f(r.cpu_cores),
            "memory_bytes": _i(r.rss_bytes),
            "start_time": _i(r.start_time),
            "throttled_per_s": _f(r.throttled_per_s),
            "errors_5xx_per_s": _f(r.errors_5xx_per_s),
            "slo": [
                {
                    "kind": s.kind,
                    "limit_s": s.limit_s,
                    "p99_s": _f(s.p99_s),
                    "slow_share": _f(s.slow_share),
                    "ratio": _f(s.ratio),
                    "total_duration": s.total,
                    "budget_burned": _f(s.budget_burned),
                    "budget_since": s.budget_since,
                    "budget_today": s.budget_today,
                }
                for s in r.slos
            ],
            "error": r.error,
        }
        for r in snap.apiservers.instances
    ]
    etcd = [member_json(m, windows.get(m.instance)) for m in snap.etcd.members]
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


_JSON_OF: dict[JsonKind, Callable[[Val], Any]] = {"number": _f, "whole": _i, "flag": _b}
"""How a value of each JSON kind is written."""


def member_json(m: EtcdMemberRow, window: float | None) -> dict[str, Any]:
    """One member's object of ``signals.etcd[]``: its own fields and every per-member
    reading's that declares a JSON field, by rank. ``window`` is its seconds of samples
    (None: lifetime values).
    """
    lifetime = window is None or any(
        v.lifetime for v in (m.leader_changes, m.wal_fsync_p99_s, m.backend_commit_p99_s)
    )
    own: list[tuple[int, str, Any]] = [
        (0, "instance", m.instance),
        (30, "leader_changes", _i(m.leader_changes)),
        (70, "db_in_use_bytes", _i(m.db_in_use_bytes)),
        (80, "quota_bytes", _i(m.quota_bytes)),
        (90, "window", "lifetime" if lifetime else window),
        (100, "error", m.error),
    ]
    readings = [
        (f.rank, f.name, _JSON_OF[f.kind](member_value(r, m)))
        for r in MEMBER_READINGS
        if (f := r.json) is not None
    ]
    return {name: value for _, name, value in sorted([*own, *readings], key=lambda x: x[0])}


def _trend_json(t: Trend | None) -> dict[str, Any] | None:
    if t is None:
        return None
    return {
        "since": t.since,
        "since_before_history": t.since_before_history,
        "direction": t.direction.value,
        "change": t.change,
    }


def _evidence_json(e: Evidence, files: Mapping[Area, Sequence[str]]) -> dict[str, Any]:
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
        "files": list(files.get(e.pane, ())) if e.pane is not None else [],
    }


def _path_json(p: PathResult, files: Mapping[Area, Sequence[str]]) -> dict[str, Any]:
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
        "evidence": [_evidence_json(e, files) for e in p.evidence],
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


def timeline_json(events: Sequence[TimelineEvent]) -> list[dict[str, Any]]:
    """The incident timeline, oldest first (``docs/triage-json.md``)."""
    return [
        {
            "at": e.at,
            "before_history": e.before_history,
            "kind": e.kind.value,
            "severity": e.severity.name.lower(),
            "subjects": list(e.subjects),
            "text": e.text,
            "reading": e.metric or None,
            "value": e.value,
            "area": None if e.area is None else e.area.value,
        }
        for e in events
    ]


def to_json(
    report: TriageReport,
    snap: ClusterSnapshot,
    *,
    source: Mapping[str, Any],
    errors: Sequence[str] = (),
    windows: Mapping[str, float | None] | None = None,
    timeline: Sequence[TimelineEvent] = (),
    audit: AuditDigest | None = None,
    files: Mapping[Area, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The version-1 JSON document (infinities as strings: :func:`finite_json`);
    ``audit``: the audit logs' digest, when they were given; ``files``: a bundle's files
    per pane (each evidence names those of its pane).
    """
    line = headline(report)
    doc = {
        "version": JSON_VERSION,
        "minor_version": JSON_MINOR_VERSION,
        "source": dict(source),
        "provider": provider_json(snap),
        "at": snap.at,
        "baseline": report.baseline,
        "error": None,
        "errors": list(errors),
        "headline": line.text(),
        "cause": _cause_json(line),
        "independent": [p.id for p in report.independent],
        "paths": [_path_json(p, files or {}) for p in report.paths],
        "timeline": timeline_json(timeline),
        "top_talkers": talkers_json(snap.apf.talkers),
        "audit": audit_json(audit),
        "capacity": [
            {"id": c.id, "title": c.title, "value": c.value, "unit": c.unit, "detail": c.detail}
            for c in report.capacity
        ],
        "signals": signals(snap, windows),
    }
    return dict(finite_json(doc))


def provider_json(snap: ClusterSnapshot) -> dict[str, str] | None:
    """Who runs the control plane and what said so (``provider``); None when the source
    does not say (the simulator, a bundle, a recording made before it was recorded).
    """
    if not snap.provider:
        return None
    return {"name": snap.provider, "because": snap.provider_because}


def talkers_json(t: TalkersView) -> dict[str, Any]:
    """The clients of every priority level from the request dumps (``top_talkers``)."""
    return {
        "unknown_reason": t.unknown_reason or None,
        "window_s": t.window_s,
        "instances_read": list(t.read),
        "instances_unread": [{"instance": i, "reason": why} for i, why in t.unread],
        "executing_listed": t.executing_listed,
        "clients": [
            {
                "priority_level": r.priority_level,
                "client": r.client,
                "flow_schema": r.flow_schema,
                "flow_distinguisher": r.distinguisher,
                "seats": r.seats,
                "seat_seconds": r.seat_s,
                "seat_share": r.seat_share,
                "queued": r.waiting,
                "queue_share": r.wait_share,
                "oldest_wait_s": r.oldest_wait_s,
                "commonest_call": r.what,
                "instances": list(r.instances),
            }
            for r in t.rows
        ],
    }


def error_json(error: str, source: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON document of a triage that could not be made (exit 2): the same top-level
    fields, with ``error`` set, no path, and ``null`` where nothing was read.
    """
    return {
        "version": JSON_VERSION,
        "minor_version": JSON_MINOR_VERSION,
        "source": dict(source),
        "provider": None,
        "at": None,
        "baseline": None,
        "error": error,
        "errors": [error],
        "headline": None,
        "cause": None,
        "independent": [],
        "paths": [],
        "timeline": [],
        "top_talkers": None,
        "audit": None,
        "capacity": [],
        "signals": None,
    }


def role_of(p: PathResult) -> Role:
    """The path's role (from its verdict when it was never ranked)."""
    if p.role is not None:
        return p.role
    return {"suspect": Role.INDEPENDENT, "unknown": Role.UNKNOWN}.get(p.verdict.value, Role.CLEAR)
