"""APF top talkers: the clients holding a priority level's seats and queues, from each
apiserver instance's request dumps over a sliding window.

``apiserver_request_total`` has had no client label since Kubernetes 1.18 and the
APF metrics name only the priority level and flow schema; the request dump of every
instance names the user and flow distinguisher of every queued (and, from 1.28,
executing) request. Each reading is a sample of who holds what at that moment; over
:data:`TALKER_WINDOW_S` the samples of an instance are averaged (a client absent from
a reading held nothing then), and instances are summed. A client's share is its part
of its level's total over the same samples, so shares of one level add up to 1.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field
from statistics import median

from ktop.model.events import ApfRequestsFailed, ApfRequestsRead, ApfTalker
from ktop.model.snapshot_apf import TALKER_WINDOW_S, TalkerRow, TalkersView
from ktop.model.text import fmt_si, numeric


@dataclass(slots=True)
class TalkerWindow:
    """The recent request dumps of every instance (the model's state for talkers)."""

    readings: dict[str, deque[ApfRequestsRead]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def read(self, e: ApfRequestsRead) -> None:
        """Add a reading; readings older than the window are dropped."""
        q = self.readings.setdefault(e.instance, deque())
        q.append(e)
        self.errors.pop(e.instance, None)
        while q and q[0].at < e.at - TALKER_WINDOW_S:
            q.popleft()

    def failed(self, e: ApfRequestsFailed) -> None:
        """Record why an instance's dump could not be read."""
        self.errors[e.instance] = e.reason

    def drop(self, instance: str) -> None:
        """Forget an instance that is no longer read."""
        self.readings.pop(instance, None)
        self.errors.pop(instance, None)

    def view(self, now: float, shown: set[str] | None = None, waiting: str = "") -> TalkersView:
        """The talkers over the window ending ``now`` (``shown``: the instances to sum,
        None for all).
        """
        fresh: dict[str, list[ApfRequestsRead]] = {}
        for inst, q in self.readings.items():
            if shown is not None and inst not in shown:
                continue
            recent = [r for r in q if now - TALKER_WINDOW_S <= r.at <= now]
            if recent:
                fresh[inst] = recent
        unread = tuple(
            sorted((i, why) for i, why in self.errors.items() if shown is None or i in shown)
        )
        if not fresh:
            reason = "; ".join(f"{i}: {why}" for i, why in unread) or waiting
            return TalkersView(
                unread=unread, unknown_reason=reason or "no APF request dump read yet"
            )
        return _fold(fresh, unread)


@dataclass(slots=True)
class _Acc:
    flow_schema: str = ""
    distinguisher: str = ""
    seats: float = 0.0
    waiting: float = 0.0
    oldest: float = 0.0
    what: dict[str, float] = field(default_factory=dict)
    by_instance: dict[str, float] = field(default_factory=dict)


def _covered(readings: list[ApfRequestsRead]) -> float:
    """Seconds a run of readings stands for: their span plus one typical interval."""
    if len(readings) < 2:
        return 0.0
    gaps = [b.at - a.at for a, b in itertools.pairwise(readings)]
    return readings[-1].at - readings[0].at + median(gaps)


def _client(t: ApfTalker) -> str:
    return t.user or t.distinguisher or "(no user)"


def _shown(x: float) -> float:
    """``x`` as the talkers table prints it (``fmt_si``: 12.4 and 11.6 are both ``12``)."""
    return numeric(fmt_si(x)) or 0.0


def _fold(
    fresh: dict[str, list[ApfRequestsRead]], unread: tuple[tuple[str, str], ...]
) -> TalkersView:
    accs: dict[tuple[str, str], _Acc] = {}
    covered = max(_covered(rs) for rs in fresh.values())
    for inst, readings in sorted(fresh.items()):
        n = len(readings)
        latest = readings[-1]
        for r in readings:
            for t in r.talkers:
                a = accs.setdefault((t.priority_level, _client(t)), _Acc())
                seats, waiting = t.executing_seats / n, t.waiting / n
                a.flow_schema = a.flow_schema or t.flow_schema
                a.distinguisher = a.distinguisher or t.distinguisher
                a.seats += seats
                a.waiting += waiting
                a.by_instance[inst] = a.by_instance.get(inst, 0.0) + seats + waiting
                if t.what:
                    a.what[t.what] = a.what.get(t.what, 0.0) + t.executing + t.waiting
                if r is latest:
                    a.oldest = max(a.oldest, t.oldest_wait_s)
    level_seats: dict[str, float] = {}
    level_waiting: dict[str, float] = {}
    for (pl, _), a in accs.items():
        level_seats[pl] = level_seats.get(pl, 0.0) + a.seats
        level_waiting[pl] = level_waiting.get(pl, 0.0) + a.waiting
    executing_listed = any(r.executing_listed for rs in fresh.values() for r in rs)
    rows = [
        TalkerRow(
            priority_level=pl,
            client=client,
            flow_schema=a.flow_schema,
            distinguisher=a.distinguisher,
            instances=tuple(
                i for i, _ in sorted(a.by_instance.items(), key=lambda kv: (-kv[1], kv[0]))
            ),
            seats=a.seats,
            seat_s=a.seats * covered,
            seat_share=a.seats / level_seats[pl]
            if executing_listed and level_seats[pl] > 0
            else None,
            waiting=a.waiting,
            wait_share=a.waiting / level_waiting[pl] if level_waiting[pl] > 0 else None,
            oldest_wait_s=a.oldest,
            what=min(a.what.items(), key=lambda kv: (-kv[1], kv[0]))[0] if a.what else "",
        )
        for (pl, client), a in accs.items()
    ]
    # By the numbers as printed (seats and queued in fmt_si), then by name: averages
    # that move below the printed precision never swap two rows.
    rows.sort(
        key=lambda r: (
            -_shown(level_waiting[r.priority_level]),
            -_shown(level_seats[r.priority_level]),
            r.priority_level,
            -(_shown(r.seats) + _shown(r.waiting)),
            r.client,
        )
    )
    return TalkersView(
        rows=tuple(rows),
        read=tuple(sorted(fresh)),
        executing_listed=executing_listed,
        unread=unread,
        covered_s=covered,
    )
