"""API Priority and Fairness: from per-instance series to the APF snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ktop.model.events import ApfLevelDump
from ktop.model.histogram import Buckets, merge_buckets
from ktop.model.series import TargetSeries
from ktop.model.series_window import Key
from ktop.model.since_start import rate_by_since_start
from ktop.model.snapshot_apf import ApfRow, ApfSnapshot
from ktop.model.values import Val, sum_vals

INQ = "apiserver_flowcontrol_current_inqueue_requests"
EXEC = "apiserver_flowcontrol_current_executing_requests"
SEATS = "apiserver_flowcontrol_current_executing_seats"
LIMIT = "apiserver_flowcontrol_current_limit_seats"
NOMINAL = "apiserver_flowcontrol_nominal_limit_seats"
WAIT = "apiserver_flowcontrol_request_wait_duration_seconds"
REJECTED = "apiserver_flowcontrol_rejected_requests_total"
DISPATCHED = "apiserver_flowcontrol_dispatched_requests_total"

DUMP_ONLY = "the APF dump has no wait times and lifetime counters only (rates need metrics)"
DUMP_ONLY_REASON = "unknown"
"""The rejection 'reason' of a dump-only row: its rate is unknown."""

PL_FS = ("priority_level", "flow_schema")
PL = ("priority_level",)


@dataclass(slots=True)
class _Acc:
    """Accumulates one row's inputs before they become an ApfRow."""

    in_queue: list[Val] = field(default_factory=list)
    executing: list[Val] = field(default_factory=list)
    seats: list[Val] = field(default_factory=list)
    limit: list[Val] = field(default_factory=list)
    dispatched: list[Val] = field(default_factory=list)
    rejected: dict[str, list[Val]] = field(default_factory=dict)
    wait: list[Buckets] = field(default_factory=list)
    dump_only: bool = False
    """Read from an APF dump alone: no wait times, and lifetime counters only."""

    def add(self, other: _Acc) -> None:
        self.in_queue += other.in_queue
        self.executing += other.executing
        self.seats += other.seats
        self.dispatched += other.dispatched
        self.wait += other.wait
        self.dump_only = self.dump_only or other.dump_only
        for reason, vals in other.rejected.items():
            self.rejected.setdefault(reason, []).extend(vals)

    def row(self, instance: str, pl: str, fs: str, limit: Val | None = None) -> ApfRow:
        wait = merge_buckets(self.wait)
        # A level with no request in its queue since the apiserver started has no series.
        no_wait = Val.unknown(DUMP_ONLY) if self.dump_only else Val.nothing("no request waited")
        return ApfRow(
            instance=instance,
            priority_level=pl,
            flow_schema=fs,
            in_queue=sum_vals(self.in_queue, empty_reason="not exposed"),
            executing=sum_vals(self.executing, empty_reason="not exposed"),
            seats_in_use=sum_vals(self.seats, empty_reason="not exposed"),
            seats_limit=limit if limit is not None else Val.unknown("per priority level only"),
            wait_p50_s=wait.quantile(0.5) if wait else no_wait,
            wait_p99_s=wait.quantile(0.99) if wait else no_wait,
            dispatched_per_s=sum_vals(self.dispatched, empty_reason="not exposed"),
            rejected_per_s={r: sum_vals(v) for r, v in sorted(self.rejected.items())},
        )


def _flows(ts: TargetSeries) -> dict[Key, _Acc]:
    """Per (priority level, flow schema) inputs of one instance."""
    accs: dict[Key, _Acc] = {}

    def acc(k: Key) -> _Acc:
        return accs.setdefault(k, _Acc())

    for k, v in ts.gauge_by(INQ, PL_FS).items():
        acc(k).in_queue.append(v)
    for k, v in ts.gauge_by(EXEC, PL_FS).items():
        acc(k).executing.append(v)
    for k, v in ts.gauge_by(SEATS, PL_FS).items():
        acc(k).seats.append(v)
    for k, v in ts.rate_by(DISPATCHED, PL_FS).items():
        acc(k).dispatched.append(v)
    for (pl, fs, reason), v in rate_by_since_start(ts, REJECTED, (*PL_FS, "reason")).items():
        acc((pl, fs)).rejected.setdefault(reason, []).append(v)
    for k, b in ts.buckets_by(WAIT, PL_FS).items():
        acc(k).wait.append(b)
    # An instance that exposes APF gauges at all but has no series for a flow has
    # nothing queued or executing there (gauge series appear on first use), and a
    # counter without a series has counted nothing: zero, not unknown.
    exposed = any(ts.label_values(n, "priority_level") for n in (INQ, EXEC, SEATS))
    for a in accs.values():
        _default_zeros(a, ts, exposed)
    return accs


def _default_zeros(a: _Acc, ts: TargetSeries, gauges_exposed: bool) -> None:
    for vals in (a.in_queue, a.executing, a.seats):
        if not vals and gauges_exposed:
            vals.append(Val.of(0.0))
    if not a.dispatched:
        why = ts.counters_unknown
        a.dispatched.append(Val.unknown(why) if why else Val.of(0.0))


def _limits(ts: TargetSeries) -> dict[str, Val]:
    limits = {k[0]: v for k, v in ts.gauge_by(NOMINAL, PL).items()}
    limits.update({k[0]: v for k, v in ts.gauge_by(LIMIT, PL).items()})
    return limits


def _from_dump(levels: tuple[ApfLevelDump, ...]) -> dict[str, _Acc]:
    out: dict[str, _Acc] = {}
    for lv in levels:
        a = _Acc(dump_only=True)
        a.rejected[DUMP_ONLY_REASON] = [Val.unknown(DUMP_ONLY)]
        if lv.waiting_requests is not None:
            a.in_queue.append(Val.of(lv.waiting_requests))
        if lv.executing_requests is not None:
            a.executing.append(Val.of(lv.executing_requests))
        out[lv.priority_level] = a
    return out


def _severity_key(row: ApfRow) -> tuple[float, float, float, str]:
    return (
        -row.rejected_total_per_s.or_(0.0),
        -row.in_queue.or_(0.0),
        -row.wait_p99_s.or_(0.0),
        row.priority_level,
    )


def build_apf(
    series: Mapping[str, TargetSeries],
    dumps: Mapping[str, tuple[ApfLevelDump, ...]],
    unknown_reason: str,
) -> ApfSnapshot:
    """Build the APF snapshot from each apiserver's series (and APF dumps as fallback).

    ``series`` and ``dumps`` are keyed by apiserver instance. An instance
    whose metrics have no APF families contributes its dump's waiting and
    executing counts instead.
    """
    per_instance: list[ApfRow] = []
    flows: dict[Key, _Acc] = {}
    levels: dict[str, _Acc] = {}
    level_limits: dict[str, list[Val]] = {}
    for instance in sorted(set(series) | set(dumps)):
        ts = series.get(instance)
        inst_flows = _flows(ts) if ts is not None else {}
        inst_levels: dict[str, _Acc] = {}
        if inst_flows:
            for (pl, fs), a in inst_flows.items():
                flows.setdefault((pl, fs), _Acc()).add(a)
                inst_levels.setdefault(pl, _Acc()).add(a)
        elif instance in dumps:
            inst_levels = _from_dump(dumps[instance])
        limits = _limits(ts) if ts is not None else {}
        if inst_flows:
            # A level with a seat limit but no flow traffic is idle, not absent.
            for pl in limits:
                if pl not in inst_levels and ts is not None:
                    _default_zeros(inst_levels.setdefault(pl, _Acc()), ts, True)
        for pl, a in inst_levels.items():
            levels.setdefault(pl, _Acc()).add(a)
            limit = limits.get(pl, Val.unknown("no seat limit exposed"))
            level_limits.setdefault(pl, []).append(limit)
            per_instance.append(a.row(instance, pl, "", limit))
    level_rows = [
        a.row("", pl, "", sum_vals(level_limits.get(pl, []), empty_reason="no seat limit"))
        for pl, a in levels.items()
    ]
    flow_rows = [a.row("", pl, fs) for (pl, fs), a in flows.items()]
    reason = "" if (levels or flows) else (unknown_reason or "no apiserver reported APF data")
    return ApfSnapshot(
        levels=tuple(sorted(level_rows, key=_severity_key)),
        flows=tuple(sorted(flow_rows, key=_severity_key)),
        per_instance=tuple(sorted(per_instance, key=lambda r: (r.priority_level, r.instance))),
        unknown_reason=reason,
    )
