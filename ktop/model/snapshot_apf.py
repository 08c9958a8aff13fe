"""The APF area's snapshot: priority levels, flows and top talkers (see
:mod:`ktop.model.snapshot`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ktop.model.values import Val, sum_vals

# --------------------------------------------------------------------------
# APF


@dataclass(frozen=True, slots=True)
class ApfRow:
    """APF numbers for one priority level (and flow schema, unless rolled up).

    ``instance`` is empty for the cluster-wide roll-up; ``flow_schema`` is
    empty for the per-priority-level roll-up.
    """

    instance: str
    priority_level: str
    flow_schema: str
    in_queue: Val
    executing: Val
    seats_in_use: Val
    seats_limit: Val
    """``apiserver_flowcontrol_current_limit_seats`` (nominal when absent)."""
    wait_p50_s: Val
    wait_p99_s: Val
    dispatched_per_s: Val
    rejected_per_s: Mapping[str, Val]
    """Rejections per second by reason (queue-full, concurrency-limit, time-out)."""

    @property
    def rejected_total_per_s(self) -> Val:
        """Rejections per second over all reasons (0 when none are recorded)."""
        if not self.rejected_per_s:
            return Val.of(0.0)
        return sum_vals(list(self.rejected_per_s.values()))


TALKER_WINDOW_S = 60.0
"""How far back the APF request dumps are averaged (top talkers)."""


@dataclass(frozen=True, slots=True)
class TalkerRow:
    """One client of one priority level over the window, summed over instances."""

    priority_level: str
    client: str
    """The user name, or the flow distinguisher when the dump has no request details."""
    flow_schema: str
    distinguisher: str
    instances: tuple[str, ...]
    """The instances its requests landed on, the heaviest first."""
    seats: float
    """Seats its executing requests held, averaged over the window's readings."""
    seat_s: float
    """``seats`` times the seconds the readings cover: seat-seconds over the window."""
    seat_share: float | None
    """Its part of its level's executing seats (None: the level held none, or executing
    requests are not listed by any instance)."""
    waiting: float
    """Requests it had queued, averaged over the window's readings."""
    wait_share: float | None
    """Its part of its level's queued requests (None: nothing queued)."""
    oldest_wait_s: float
    """The longest wait of one of its queued requests in the latest readings."""
    what: str
    """Its commonest verb and resource (``list pods``)."""

    @property
    def load_share(self) -> float:
        """The larger of its two shares: how much of the level it takes (0 when neither
        is known).
        """
        return max(self.seat_share or 0.0, self.wait_share or 0.0)

    def share_words(self) -> str:
        """``92% of seats`` (executing seats known), else ``80% of the queue``; empty
        when neither share is known.
        """
        if self.seat_share is not None:
            return f"{self.seat_share * 100:.0f}% of seats"
        if self.wait_share is not None:
            return f"{self.wait_share * 100:.0f}% of the queue"
        return ""

    def sentence(self) -> str:
        """``workload-low: 92% of seats system:serviceaccount:batch:reporter (list pods)``."""
        what = f" ({self.what})" if self.what else ""
        share = self.share_words() or "the most load"
        return f"{self.priority_level}: {share} {self.client}{what}"


@dataclass(frozen=True, slots=True)
class TalkersView:
    """Every level's talkers, with what was read and why not."""

    rows: tuple[TalkerRow, ...] = ()
    """Per (level, client), levels with the most queued first, then the heaviest client."""
    read: tuple[str, ...] = ()
    """Instances whose dump was read within the window."""
    executing_listed: bool = False
    """True when some instance lists executing requests (1.28+): seat shares are known."""
    unread: tuple[tuple[str, str], ...] = ()
    """``(instance, reason)`` of instances whose last read failed."""
    window_s: float = TALKER_WINDOW_S
    covered_s: float = 0.0
    """Seconds the readings cover (for seat-seconds)."""
    unknown_reason: str = ""
    """Why there is nothing to show (empty when some dump was read)."""

    def of_level(self, level: str) -> tuple[TalkerRow, ...]:
        """The talkers of one priority level, heaviest first."""
        return tuple(r for r in self.rows if r.priority_level == level)


@dataclass(frozen=True, slots=True)
class ApfSnapshot:
    """API Priority and Fairness across apiserver instances."""

    levels: tuple[ApfRow, ...]
    """Per priority level, summed across instances, sorted worst first."""
    flows: tuple[ApfRow, ...]
    """Per (priority level, flow schema), summed across instances."""
    per_instance: tuple[ApfRow, ...]
    """Per (instance, priority level)."""
    unknown_reason: str = ""
    """Why APF data is unknown (empty when at least one instance reported)."""
    talkers: TalkersView = TalkersView(unknown_reason="not read")
    """Who holds the seats and queues, from the instances' request dumps."""
