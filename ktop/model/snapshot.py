"""Immutable snapshots: what the model hands to analysis and views.

A snapshot never shares mutable state with the model. Views render it;
analysis reads it; neither can change it. Formulas for every field are in
``docs/panes.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from ktop.model.events import Area, SelfCost, SimPace
from ktop.model.history import EMPTY_HISTORY, HistoryView
from ktop.model.leaders import LeaderStatus
from ktop.model.list_sizes import ListSize
from ktop.model.series import WINDOW_S
from ktop.model.snapshot_nodes import NodesSnapshot
from ktop.model.snapshot_scheduler import SchedulerSnapshot
from ktop.model.text import fmt_clock
from ktop.model.values import Val, ratio, sum_vals

NOT_EXPOSED = Val(None, "not exposed")
NOT_COUNTED = Val(None, "not counted")
"""An SLO row's budget before ktop counted its calls (``ktop/model/slo_budget.py``)."""

# --------------------------------------------------------------------------
# Freshness

FIRST_DATA_DUE_S = 30.0
"""An input is due to deliver its first data this long after the source started (every
feed's first page and every target's first scrape, at the slowest default cadence, with
room for a busy machine); until then an area without data is *waiting*, after that it
is *failed* (never read). A source that reads slower than that says when its first data
is due (:func:`first_data_due_s`, ``SourceStarted.first_data_due_s``)."""


def first_data_due_s(cadences_s: Iterable[float]) -> float:
    """How long after its start a source's first data is due, given the cadences its
    inputs are read at: twice the slowest (the first read, and one more that must land
    if the first was lost), and never less than :data:`FIRST_DATA_DUE_S`.
    """
    return max([FIRST_DATA_DUE_S, *(2 * c for c in cadences_s)])


STALE_AFTER_S = 60.0
"""An input silent this long is stale (a scrape or feed silent for 6 polls): an area
whose stalest input is older is shown stale (``STALE_AFTER`` in the catalogue), and a
real apiserver instance no longer hides the load-balanced reads (``ktop/model/cluster.py``)."""


@dataclass(frozen=True, slots=True)
class Freshness:
    """How fresh one input is (a scrape target, a feed, an APF dump)."""

    name: str
    area: Area
    last_ok: float | None
    """When the input last delivered data (source clock), or never."""
    error: str = ""
    """The last error, empty when the last attempt succeeded."""
    note: str = ""
    """A problem that lost nothing but should be seen (e.g. malformed lines skipped)."""

    def age_s(self, now: float) -> float | None:
        """Seconds since the input last delivered data, or None if it never did."""
        return None if self.last_ok is None else max(0.0, now - self.last_ok)


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


# --------------------------------------------------------------------------
# apiservers


@dataclass(frozen=True, slots=True)
class SloRow:
    """One API call latency SLO on one apiserver instance (``ktop/model/slo.py``)."""

    kind: str
    """``mutating``, ``read, one object``, ``read, namespace``, ``read, cluster``."""
    limit_s: float
    p99_s: Val
    """The calls' p99 over the window."""
    slow_share: Val
    """The share of the calls slower than ``limit_s``."""
    total: bool = False
    """True when measured on the total duration (no SLI histogram): it includes APF queue
    waits and webhooks, so it overstates what the SLO measures."""
    budget_burned: Val = NOT_COUNTED
    """The share of the error budget burned by the calls counted since
    ``budget_since`` (``ktop/model/slo_budget.py``): above 1 the SLO is missed over that
    span; empty when no call was counted; unknown without the SLI histogram."""
    budget_since: float | None = None
    """When counting began: ktop's first scrape of the instance, or 00:00 UTC when
    ``budget_today`` (None: not counted)."""
    budget_today: bool = False
    """True when the day so far was counted by Prometheus (``SloDayCounted``), not by ktop
    from its own scrapes."""

    @property
    def budget_span(self) -> str:
        """Over what the budget was counted: ``today`` (by Prometheus, since 00:00 UTC) or
        ``since 14:02`` (UTC, by ktop since its first scrape); empty when not counted.
        """
        if self.budget_since is None:
            return ""
        if self.budget_today:
            return "today"
        return "since " + fmt_clock(self.budget_since)[:5]

    @property
    def ratio(self) -> Val:
        """p99 / limit: above 1 the SLO is missed (unknown for a lifetime value)."""
        p = self.p99_s
        if p.value is None:
            return p
        if p.lifetime:
            return Val.unknown("lifetime value (single scrape): not graded")
        return Val.of(p.value / self.limit_s)


@dataclass(frozen=True, slots=True)
class ApiserverRow:
    """One kube-apiserver instance."""

    instance: str
    version: str
    requests_per_s: Val
    reads_per_s: Val
    """GET and LIST."""
    writes_per_s: Val
    """POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION."""
    inflight_readonly: Val
    inflight_mutating: Val
    watches: Val
    """Long-running WATCH requests (``apiserver_longrunning_requests{verb="WATCH"}``)."""
    cpu_cores: Val
    rss_bytes: Val
    start_time: Val
    """``process_start_time_seconds``: a jump means a restart."""
    throttled_per_s: Val
    """Responses with code 429 per second."""
    terminations_per_s: Val
    last_ok: float | None
    error: str = ""
    write_p99_s: Val = NOT_EXPOSED
    """p99 of ``apiserver_request_duration_seconds`` for mutating verbs over the window."""
    slos: tuple[SloRow, ...] = ()
    """Each API call latency SLO (mutating, reads by scope) on this instance."""
    errors_5xx_per_s: Val = NOT_EXPOSED
    """Responses with a 5xx code per second."""

    @property
    def worst_slo(self) -> SloRow | None:
        """The SLO with the highest p99 / limit (None when none is known)."""
        known = [s for s in self.slos if s.ratio.value is not None]
        return max(known, key=lambda s: s.ratio.or_(0.0)) if known else None

    @property
    def worst_budget(self) -> SloRow | None:
        """The SLO that burned the largest share of its error budget (None when no budget
        is known).
        """
        known = [s for s in self.slos if s.budget_burned.value is not None]
        return max(known, key=lambda s: s.budget_burned.or_(0.0)) if known else None


@dataclass(frozen=True, slots=True)
class ApiserversSnapshot:
    """kube-apiserver instances side by side."""

    instances: tuple[ApiserverRow, ...]
    request_skew: Val
    """max(requests/s) / mean(requests/s) across reachable instances."""
    watch_skew: Val
    """max(watches) / mean(watches) across reachable instances."""
    unknown_reason: str = ""
    """Why there are no instances (empty when at least one was seen)."""
    identities: int | None = None
    """apiserver identity Leases in kube-system (None when not read)."""
    list_sizes: tuple[ListSize, ...] = ()
    """Estimated full-LIST size per resource, largest first (``ktop/model/list_sizes.py``)."""
    list_sizes_reason: str = ""
    """Why there are none, or which resources the apiserver could not estimate."""


# --------------------------------------------------------------------------
# etcd


@dataclass(frozen=True, slots=True)
class EtcdMemberRow:
    """One etcd member."""

    instance: str
    is_leader: Val
    has_leader: Val
    leader_changes: Val
    """Increase of ``etcd_server_leader_changes_seen_total`` over the window."""
    wal_fsync_p50_s: Val
    wal_fsync_p99_s: Val
    backend_commit_p99_s: Val
    proposals_pending: Val
    proposals_failed_per_s: Val
    db_size_bytes: Val
    db_in_use_bytes: Val
    quota_bytes: Val
    fragmentation: Val
    """1 - in_use / total."""
    peer_rtt_p99_s: Val
    defrag_inflight: Val
    """``etcd_disk_defrag_inflight``: 1 while the member defragments (it then blocks
    reads and writes), 0 otherwise; unknown before etcd 3.4.18, which does not expose it."""
    last_ok: float | None
    error: str = ""

    @property
    def defragmenting(self) -> bool:
        """True while the member reports a defragmentation in progress."""
        return (self.defrag_inflight.value or 0.0) >= 1.0

    @property
    def db_quota_ratio(self) -> Val:
        """Db size / quota."""
        return ratio(self.db_size_bytes, self.quota_bytes)


@dataclass(frozen=True, slots=True)
class EtcdClientRow:
    """etcd as one apiserver instance sees it (its etcd client metrics)."""

    instance: str
    requests_per_s: Val
    """``rate(etcd_requests_total)``."""
    errors_per_s: Val
    """``rate(etcd_request_errors_total)``."""
    p50_s: Val
    p99_s: Val
    """Quantiles of ``etcd_request_duration_seconds`` over every operation."""
    storage_bytes: Val
    """``apiserver_storage_size_bytes`` (older: ``apiserver_storage_db_total_size_in_bytes``)."""


@dataclass(frozen=True, slots=True)
class EtcdRequestRow:
    """One (resource, operation) of the apiservers' etcd requests, over all instances."""

    resource: str
    """``resource.group`` as in ``apiserver_storage_objects`` (the ``type`` label before 1.34)."""
    operation: str
    requests_per_s: Val
    errors_per_s: Val
    p99_s: Val


@dataclass(frozen=True, slots=True)
class EtcdApiserverView:
    """etcd as the apiservers see it: the only etcd view on managed clusters."""

    instances: tuple[EtcdClientRow, ...]
    requests: tuple[EtcdRequestRow, ...]
    """Slowest first (by p99), then busiest."""
    objects: tuple[tuple[str, Val], ...]
    """``apiserver_storage_objects`` per resource (the largest instance's count), largest
    first; -1 (a failed count) is unknown."""
    storage_bytes: Val
    """The largest storage size any apiserver reports."""
    unknown_reason: str = ""
    """Why there is no view (no apiserver exposes etcd client metrics)."""


class EtcdView(StrEnum):
    """Which etcd view the pane shows."""

    MEMBERS = "members"
    APISERVER = "apiserver"
    BOTH = "both"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class EtcdSnapshot:
    """The etcd cluster."""

    members: tuple[EtcdMemberRow, ...]
    leader: str
    """Instance that reports ``etcd_server_is_leader 1``; empty if none does."""
    leader_known: bool
    """False when no member could be read."""
    unknown_reason: str = ""
    """Why the members are unknown (empty when at least one was read)."""
    apiserver_view: EtcdApiserverView | None = None
    """etcd as the apiservers see it (None when the source reads no apiserver)."""

    @property
    def answering(self) -> tuple[EtcdMemberRow, ...]:
        """The members whose last scrape answered (the others say why in ``error``)."""
        return tuple(m for m in self.members if not m.error)

    @property
    def view(self) -> EtcdView:
        """Members, the apiservers' view, both, or none."""
        members = bool(self.answering) or (
            bool(self.members) and any(m.last_ok is not None for m in self.members)
        )
        apiserver = self.apiserver_view is not None and not self.apiserver_view.unknown_reason
        if members and apiserver:
            return EtcdView.BOTH
        if members:
            return EtcdView.MEMBERS
        return EtcdView.APISERVER if apiserver else EtcdView.NONE


# --------------------------------------------------------------------------
# the whole


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Everything the views need at one instant."""

    at: float
    """The source clock when the snapshot was taken."""
    source_kind: str
    context: str
    source_detail: str
    apf: ApfSnapshot
    apiservers: ApiserversSnapshot
    etcd: EtcdSnapshot
    scheduler: SchedulerSnapshot
    nodes: NodesSnapshot
    freshness: tuple[Freshness, ...] = field(default=())
    window_s: float = WINDOW_S
    seq: int = 0
    """Increases by one with every published snapshot."""
    self_cost: SelfCost | None = None
    """ktop's own load on the cluster (live sources only)."""
    pace: SimPace | None = None
    """How fast the source's clock moves against the asked speed (the simulator only)."""
    history: HistoryView = EMPTY_HISTORY
    """Every signal's recent past (``ktop/model/signals.py``), this snapshot included."""
    leaders: tuple[LeaderStatus, ...] = ()
    """Who leads the scheduler and the controller-manager (``ktop/model/leaders.py``)."""
    started_at: float | None = None
    """When the source started (None when unknown: an old recording's keyframe)."""
    first_data_due_s: float = FIRST_DATA_DUE_S
    """How long after the start the source's first data is due (from its cadence)."""

    def area_waiting_s(self, area: Area) -> float | None:
        """Seconds since the source started when the area is *waiting*: no input of it has
        delivered data or failed yet, and its first data is not yet due
        (:attr:`first_data_due_s` after the start); None when it is not waiting (it has
        data, an input failed, the data is overdue, or the start is unknown).
        """
        if self.started_at is None:
            return None
        since = max(0.0, self.at - self.started_at)
        if since > self.first_data_due_s:
            return None
        inputs = self.area_freshness(area)
        if any(f.last_ok is not None or f.error for f in inputs):
            return None
        return since

    def area_due_in_s(self, area: Area) -> float | None:
        """Seconds until the area's first data is due while it is *waiting* (0 at the due
        time itself); None when it is not waiting.
        """
        since = self.area_waiting_s(area)
        return None if since is None else max(0.0, self.first_data_due_s - since)

    def area_freshness(self, area: Area) -> tuple[Freshness, ...]:
        """The inputs that feed one area."""
        return tuple(f for f in self.freshness if f.area == area)

    def area_age_s(self, area: Area) -> float | None:
        """Age of the stalest input that has delivered data for an area."""
        ages = [a for f in self.area_freshness(area) if (a := f.age_s(self.at)) is not None]
        return max(ages) if ages else None
