"""The incident timeline: what changed, in time order, from a snapshot's history.

A pure function of a snapshot (its :class:`~ktop.model.history.HistoryView`, which holds
ktop's own frames and any Prometheus backfill) and the recording's markers:

* **apiserver restarts**: an instance's uptime (``api.uptime_s``) drops; the restart is
  at the frame's time minus the new uptime. An instance that started within the
  history's retention before its first frame is a start *before the history*.
* **etcd leader changes**: a member's ``etcd.is_leader`` goes from 0 to 1 (the leader
  moved to it), and members' ``etcd.has_leader`` going to 0 (no leader) and back.
* **zone state transitions**: the node lifecycle controller's rule
  (:func:`ktop.model.zones.zone_state`) applied to each frame's zone size and unhealthy
  count (``nodes.zone_size``, ``nodes.unhealthy``).
* **the first crossing of each threshold**: for every graded reading and subject, the
  first frame whose value passes the warning limit, and the first that passes the
  critical one (a reading already past it in the first frame crossed *before the
  history*).
* **the diagnosis**: when the probable cause and each independent suspect of the
  triage report began (its onset: the start of its suspect episode,
  ``ktop/analysis/triage/onset.py``, so size- and baseline-relative limits count too).
* **recording markers**, with their notes.

Events of one kind with the same words at the same frame are one line that names every
subject (three members losing their leader at once is one fact).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from ktop.analysis.triage.timeline_scan import RESTART_TOLERANCE_S, KeyScan, scan
from ktop.analysis.triage.types import Role, TriageReport
from ktop.model.events import Area
from ktop.model.grading import Severity
from ktop.model.history import HistoryView, Point
from ktop.model.reading import Reading, key, split_key
from ktop.model.signals import BY_METRIC, SIGNALS
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_nodes import ZoneState
from ktop.model.text import fmt_bytes, fmt_duration, fmt_pct, fmt_si, fmt_times
from ktop.model.values import whole
from ktop.model.zones import DEFAULT_UNHEALTHY_ZONE_THRESHOLD, zone_state


class EventKind(StrEnum):
    """What kind of change a timeline event is."""

    RESTART = "restart"
    LEADER = "leader"
    ZONE = "zone"
    THRESHOLD = "threshold"
    DIAGNOSIS = "diagnosis"
    MARKER = "marker"


KIND_MARK: dict[EventKind, str] = {
    EventKind.RESTART: "R",
    EventKind.LEADER: "L",
    EventKind.ZONE: "Z",
    EventKind.THRESHOLD: "!",
    EventKind.DIAGNOSIS: "D",
    EventKind.MARKER: "M",
}
"""Each kind's one-letter mark: on a chart's time axis, in the timeline's lines."""

KIND_WORD: dict[EventKind, str] = {
    EventKind.RESTART: "apiserver restart",
    EventKind.LEADER: "etcd leader",
    EventKind.ZONE: "zone state",
    EventKind.THRESHOLD: "threshold crossed",
    EventKind.DIAGNOSIS: "diagnosis",
    EventKind.MARKER: "recording marker",
}
"""What each mark stands for (the legends of the timeline screen and of docs/triage.md)."""

KIND_AREA: dict[EventKind, Area | None] = {
    EventKind.RESTART: Area.APISERVERS,
    EventKind.LEADER: Area.ETCD,
    EventKind.ZONE: Area.NODES,
    EventKind.THRESHOLD: None,
    EventKind.DIAGNOSIS: None,
    EventKind.MARKER: None,
}
"""The area a kind of event belongs to (a threshold's is its reading's; a marker's none)."""


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """One change: when, what, how bad, and on which subjects."""

    at: float
    """When it happened (source clock); for a change before the history, its first frame."""
    kind: EventKind
    text: str
    """What happened, without the subjects or the value (``restarted``, ``Normal →
    FullDisruption``, ``backend commit p99 > 250ms (warning)``)."""
    subjects: tuple[str, ...]
    """The instances, members, zones or subjects it happened to (empty: cluster-wide)."""
    severity: Severity
    area: Area | None
    metric: str = ""
    """The reading a threshold crossing is of (empty for other kinds)."""
    before_history: bool = False
    """It happened before the oldest frame held: ``at`` is an upper bound."""
    value: float | None = None
    """A threshold crossing's value (the worst of its subjects' when folded)."""
    value_text: str = ""
    """``value`` in the reading's unit."""

    @property
    def line(self) -> str:
        """``etcd-0, etcd-1: backend commit p99 > 250ms (warning): 339ms``."""
        who = ", ".join(s for s in self.subjects if s)
        what = f"{self.text}: {self.value_text}" if self.value_text else self.text
        return f"{who}: {what}" if who else what


# --------------------------------------------------------------------------
# each kind


def _of(scans: Mapping[str, KeyScan], metric: str) -> list[tuple[str, KeyScan]]:
    return [(split_key(k)[1], s) for k, s in scans.items() if split_key(k)[0] == metric]


def restarts(
    scans: Mapping[str, KeyScan], view: HistoryView, now: float
) -> Iterator[TimelineEvent]:
    """Apiserver restarts, from each instance's uptime."""
    for inst, s in _of(scans, "api.uptime_s"):
        t0, up0 = s.first
        first_at = view.first_at if view.first_at is not None else t0
        if now - (t0 - up0) <= view.retention_s:
            yield _restart(inst, t0 - up0, before=t0 - up0 < first_at)
        for t, up in s.drops:
            yield _restart(inst, t - up, before=False)


def _restart(inst: str, at: float, *, before: bool) -> TimelineEvent:
    return TimelineEvent(
        at,
        EventKind.RESTART,
        "apiserver started (before the history)" if before else "apiserver (re)started",
        (inst,),
        Severity.WARNING,
        Area.APISERVERS,
    )


def _pairs(changes: Sequence[Point]) -> Iterator[tuple[float, float | None, float]]:
    """``(time, previous, value)`` of each change (previous None for the first point)."""
    prev: float | None = None
    for t, v in changes:
        yield t, prev, v
        prev = v


def leader_changes(scans: Mapping[str, KeyScan]) -> Iterator[TimelineEvent]:
    """Etcd leader moves and losses, from the members' ``is_leader`` and ``has_leader``."""
    for member, s in _of(scans, "etcd.is_leader"):
        for t, prev, v in _pairs(s.changes):
            if prev is not None and prev < 0.5 <= v:
                yield TimelineEvent(
                    t, EventKind.LEADER, "became the etcd leader", (member,), Severity.WARNING,
                    Area.ETCD,
                )  # fmt: skip
    for member, s in _of(scans, "etcd.has_leader"):
        for t, prev, v in _pairs(s.changes):
            if v < 0.5 and (prev is None or prev >= 0.5):
                before = prev is None
                text = "no etcd leader" + (" (before the history)" if before else "")
                yield TimelineEvent(
                    t, EventKind.LEADER, text, (member,), Severity.CRITICAL, Area.ETCD,
                    before_history=before,
                )  # fmt: skip
            elif prev is not None and prev < 0.5 <= v:
                yield TimelineEvent(
                    t, EventKind.LEADER, "has an etcd leader again", (member,), Severity.OK,
                    Area.ETCD,
                )  # fmt: skip


ZONE_SEVERITY: dict[ZoneState, Severity] = {
    ZoneState.NORMAL: Severity.OK,
    ZoneState.PARTIAL_DISRUPTION: Severity.WARNING,
    ZoneState.FULL_DISRUPTION: Severity.CRITICAL,
}


def _value_at(changes: Sequence[Point], t: float) -> float | None:
    """The value of a step signal at ``t`` (its last change at or before ``t``)."""
    i = bisect_right(changes, t, key=lambda p: p[0])
    return changes[i - 1][1] if i else None


def zone_transitions(scans: Mapping[str, KeyScan]) -> Iterator[TimelineEvent]:
    """Zone state changes: the lifecycle controller's rule on the zone's size and
    unhealthy count at every frame where either changed.
    """
    for zone, size_scan in _of(scans, "nodes.zone_size"):
        bad_scan = scans.get(key("nodes.unhealthy", zone))
        if bad_scan is None:
            continue
        times = sorted({t for t, _ in size_scan.changes} | {t for t, _ in bad_scan.changes})
        prev: ZoneState | None = None
        for t in times:
            size, bad = _value_at(size_scan.changes, t), _value_at(bad_scan.changes, t)
            n_size, n_bad = whole(size or 0.0), whole(bad or 0.0)
            if size is None or bad is None or n_size is None or n_bad is None:
                continue  # unknown, or an infinite count: no zone state
            state = zone_state(max(0, n_size - n_bad), n_bad)
            if state is not prev and (prev is not None or state is not ZoneState.NORMAL):
                before = prev is None
                text = (
                    f"zone {state.value} (before the history)"
                    if before
                    else f"zone {prev.value if prev else ''} → {state.value}"
                )
                yield TimelineEvent(
                    t, EventKind.ZONE, text, (zone,), ZONE_SEVERITY[state], Area.NODES,
                    before_history=before,
                )  # fmt: skip
            prev = state


def threshold_crossings(scans: Mapping[str, KeyScan]) -> Iterator[TimelineEvent]:
    """The first frame each graded reading's subject passes its warning limit, and the
    first it passes its critical one (one event when both are the same frame).
    """
    for k, s in scans.items():
        metric, subject = split_key(k)
        reading = BY_METRIC.get(metric)
        if reading is None or reading.threshold is None:
            continue
        if s.warn is not None and (s.crit is None or s.warn[0] < s.crit[0]):
            yield _crossing(reading, subject, s.warn, Severity.WARNING, s.first)
        if s.crit is not None:
            yield _crossing(reading, subject, s.crit, Severity.CRITICAL, s.first)


def _crossing(
    reading: Reading, subject: str, at: Point, sev: Severity, first: Point
) -> TimelineEvent:
    th = reading.threshold
    assert th is not None
    t, v = at
    limit = th.critical if sev is Severity.CRITICAL else th.warn
    word = "critical" if sev is Severity.CRITICAL else "warning"
    op = ("<=" if th.inclusive else "<") if th.below else (">=" if th.inclusive else ">")
    before = t == first[0]
    text = (
        f"{th.name} {op} {_limit(reading, limit)} ({word}{' before the history' if before else ''})"
    )
    return TimelineEvent(
        t, EventKind.THRESHOLD, text, (subject,) if subject else (), sev, reading.area,
        metric=reading.metric, before_history=before, value=v, value_text=_value(reading, v),
    )  # fmt: skip


def _value(reading: Reading, v: float) -> str:
    unit = reading.threshold.unit if reading.threshold is not None else reading.unit
    if reading.unit == "s":
        return fmt_duration(v)
    if reading.unit == "B":
        return fmt_bytes(v)
    if unit == "ratio":
        return fmt_pct(v)
    if unit == "x":
        return fmt_times(v)
    number = fmt_si(v) if abs(v) >= 10 else f"{v:.3g}"
    return number + ("/s" if reading.unit == "/s" else "")


def _limit(reading: Reading, limit: float | None) -> str:
    return "?" if limit is None or math.isnan(limit) else _value(reading, limit)


DIAGNOSIS_WORD: dict[Role, str] = {
    Role.CAUSE: "probable cause",
    Role.INDEPENDENT: "independent suspect",
}
"""The diagnosis' roles whose onset is on the timeline (a consequence's is its cause's
story, told on the triage screen)."""


def diagnosis_onsets(report: TriageReport) -> Iterator[TimelineEvent]:
    """When each suspect path of the diagnosis began (the paths with an onset)."""
    for p in report.paths:
        t = p.trend
        if p.role not in DIAGNOSIS_WORD or t is None or t.since is None:
            continue
        assert p.role is not None
        before = " before the history" if t.since_before_history else ""
        yield TimelineEvent(
            t.since, EventKind.DIAGNOSIS,
            f"{p.id} begins ({DIAGNOSIS_WORD[p.role]}{before}): {p.title}", (),
            Severity.CRITICAL, None, before_history=t.since_before_history,
        )  # fmt: skip


def markers(notes: Iterable[tuple[float, str]], now: float) -> Iterator[TimelineEvent]:
    """The recording's markers up to ``now``."""
    for at, note in notes:
        if at <= now:
            yield TimelineEvent(
                at, EventKind.MARKER, f"marker: {note or '(no note)'}", (), Severity.INFO, None
            )


# --------------------------------------------------------------------------
# the whole


def fold(events: Iterable[TimelineEvent], step_s: float) -> list[TimelineEvent]:
    """Events of one kind, words and severity within one frame of each other become one
    event naming every subject (at the earliest time), in time order.
    """
    ordered = sorted(events, key=lambda e: (e.at, -e.severity, e.kind.value, e.text))
    out: list[TimelineEvent] = []
    open_at: dict[tuple[EventKind, str, Severity], int] = {}
    for e in ordered:
        group = (e.kind, e.text, e.severity)
        i = open_at.get(group)
        if i is not None and e.at - out[i].at <= step_s and e.subjects:
            merged = out[i]
            subjects = merged.subjects + tuple(s for s in e.subjects if s not in merged.subjects)
            worst = merged
            if e.value is not None and (merged.value is None or _worse(e, merged)):
                worst = e
            out[i] = replace(
                merged, subjects=subjects, value=worst.value, value_text=worst.value_text
            )
            continue
        open_at[group] = len(out)
        out.append(e)
    return out


def _worse(a: TimelineEvent, b: TimelineEvent) -> bool:
    """True when ``a``'s value is worse than ``b``'s (by its reading's direction)."""
    assert a.value is not None and b.value is not None
    reading = BY_METRIC.get(a.metric)
    below = reading is not None and reading.threshold is not None and reading.threshold.below
    return a.value < b.value if below else a.value > b.value


def incident_timeline(
    snap: ClusterSnapshot,
    report: TriageReport | None = None,
    notes: Sequence[tuple[float, str]] = (),
) -> tuple[TimelineEvent, ...]:
    """Every change the snapshot's history shows, the diagnosis' onsets (with its triage
    report) and the markers up to the snapshot, oldest first.
    """
    view = snap.history
    scans = scan(view)
    events: list[TimelineEvent] = [
        *restarts(scans, view, snap.at),
        *leader_changes(scans),
        *zone_transitions(scans),
        *threshold_crossings(scans),
        *(diagnosis_onsets(report) if report is not None else ()),
        *markers(notes, snap.at),
    ]
    return tuple(fold(events, view.step_s))


GRADED: tuple[str, ...] = tuple(r.metric for r in SIGNALS if r.threshold is not None)
"""The readings whose threshold crossings the timeline lists (docs/triage.md)."""

KIND_HOW: dict[EventKind, str] = {
    EventKind.RESTART: (
        "the instance's uptime (`api.uptime_s`: the snapshot time minus "
        "`process_start_time_seconds`, kept as an age because history values are 4-byte "
        f"floats) falls by more than {RESTART_TOLERANCE_S:g} s between two frames; the "
        "restart is at the frame's time minus the new uptime, the process' own start time. "
        "An instance that started within the retained history's span before its first "
        "frame is listed as started before the history"
    ),
    EventKind.LEADER: (
        "a member's `etcd_server_is_leader` goes from 0 to 1 (became the etcd leader); a "
        "member's `etcd_server_has_leader` goes to 0 (no etcd leader, critical) and back"
    ),
    EventKind.ZONE: (
        "the node lifecycle controller's rule (`ktop/model/zones.py`, its float32 share "
        f"against {DEFAULT_UNHEALTHY_ZONE_THRESHOLD:g}) on the zone's size and unhealthy count "
        "at every frame where either changed (`nodes.zone_size`, `nodes.unhealthy`)"
    ),
    EventKind.THRESHOLD: (
        "for every graded reading and subject, the first frame past its warning limit and "
        "the first past its critical one (one entry when both are the same frame), with the "
        f"value then; graded readings: {', '.join(f'`{m}`' for m in GRADED)}"
    ),
    EventKind.DIAGNOSIS: (
        "when the probable cause and each independent suspect began: the path's onset (the "
        "earliest breach among its suspect evidence, so size- and baseline-relative limits "
        "count too, moved back along the first-line breaches that overlap it: the start of "
        "its suspect episode)"
    ),
    EventKind.MARKER: "the markers added with `m` while recording, up to the moment shown",
}
"""How each kind of event is found, for docs/triage.md."""
