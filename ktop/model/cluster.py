"""The cluster model: folds events into state and takes immutable snapshots.

``apply`` is deterministic and does no I/O: the same events give the same
snapshots, live or replayed. State is per input (metric series per target,
nodes, leases, pending pods); snapshots are built from it on demand and an
area's snapshot is reused while none of its inputs changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ktop.model import events as ev
from ktop.model.area_nodes import NodesConfig, NodesState
from ktop.model.area_scheduler import PendingPods
from ktop.model.area_talkers import TalkerWindow
from ktop.model.clock import clock_step
from ktop.model.cluster_views import AreaViews
from ktop.model.events import Area, Component, Target
from ktop.model.exposition import skipped_count
from ktop.model.history import History
from ktop.model.model_inputs import (
    COMPONENT_AREAS,
    FEED_AREAS,
    InputHealth,
    ModelConfig,
)
from ktop.model.series import ScrapeRun, TargetSeries
from ktop.model.slo_budget import InstanceBudget, fold, fold_run
from ktop.model.snapshot import FIRST_DATA_DUE_S


class ClusterModel(AreaViews):
    """Folds events; hands out snapshots (built by :class:`AreaViews`)."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        self.config = config or ModelConfig()
        self.now = 0.0
        self.source_kind = ""
        self._waiting_shown = ""
        self.started_at: float | None = None
        """When the source started (its first ``SourceStarted``): until an input is due,
        an area without data is waiting, not failed."""
        self.first_data_due_s = FIRST_DATA_DUE_S
        """How long after the start the first data is due (the first ``SourceStarted``'s,
        from the source's cadence)."""
        self.context = ""
        self.source_detail = ""
        self.provider = ""
        self.provider_because = ""
        self.series: dict[Target, TargetSeries] = {}
        self.targets: dict[Target, InputHealth] = {}
        self.apf_dumps: dict[str, tuple[ev.ApfLevelDump, ...]] = {}
        self.apf_dump_health: dict[str, InputHealth] = {}
        self.apf_requests = TalkerWindow()
        """Recent APF request dumps per instance (top talkers)."""
        self.feeds: dict[str, InputHealth] = {}
        self.listing: dict[str, tuple[int, int | None]] = {}
        """Feeds whose initial list is under way: objects listed so far, and how many the
        apiserver said there are (None: it did not say)."""
        self.nodes = NodesState()
        self._nodes_cfg = NodesConfig(
            self.config.rack_label,
            self.config.unhealthy_zone_threshold,
            self.config.lease_renew_interval_s,
        )
        self.pending = PendingPods(self.config.window_s)
        self._dirty: set[Area] = set(Area)
        self._cache: dict[Area, Any] = {}
        self._seq = 0
        self.self_cost: ev.SelfCost | None = None
        self.pace: ev.SimPace | None = None
        """How fast the source's clock moves against the asked speed (the simulator)."""
        self.history = History(self.config.history_s, self.config.history_step_s)
        self.identities: tuple[str, ...] | None = None
        self.metrics_only = ""
        """Why the source reads no node, Lease or pod objects (empty: it reads them)."""
        self._lb_was_shown = False
        """:meth:`_lb_shown` at the last clock tick (the apiserver areas change with it)."""
        self._clock_step = -1.0
        """The clock step of the last tick that rebuilt the scheduler area, which is built
        at the start of the step (:func:`clock_step`): the same snapshot whenever in the
        step it is built, so a model rebuilt from a keyframe shows what the live one did."""
        self.readiness: dict[str, tuple[tuple[str, int, int], ...]] = {}
        """kube-state-metrics readiness rows per node label (metrics-only mode)."""
        self.slo_budgets: dict[str, InstanceBudget] = {}
        """The SLOs' calls counted per apiserver instance since its first scrape."""
        self.slo_days: dict[str, ev.SloDayCounted] = {}
        """The SLOs' calls of the day so far per apiserver instance, counted by Prometheus."""
        self._handlers = _handlers(type(self))
        """Each event type's handler, a function of the model and the event (not a bound
        method: a model holds no reference to itself, so a dropped model is freed at once,
        without waiting for the cycle collector)."""

    # ------------------------------------------------------------- folding

    def apply(self, event: ev.Event) -> None:
        """Fold one event into the state."""
        self.now = max(self.now, event.at)
        self._handlers[type(event)](self, event)

    def apply_all(self, events: Iterable[ev.Event]) -> None:
        """Fold a batch of events, in order."""
        for event in events:
            self.apply(event)

    def _scraped(self, e: ev.MetricsScraped) -> None:
        ts = self._arrived(e.target, e.at, e.parse_errors)
        ts.ingest(e.at, e.samples)
        self._count_slos(ts, e.at)

    def _count_slos(self, ts: TargetSeries, at: float) -> None:
        """An apiserver's SLO counts after its scrape at ``at`` (when it was not ignored)."""
        if ts.target.component is Component.APISERVER and ts.last_at == at:
            budget = fold(self.slo_budgets.get(ts.target.instance), at, ts)
            if budget is not None:
                self.slo_budgets[ts.target.instance] = budget

    def _arrived(self, target: Target, at: float, parse_errors: Sequence[str]) -> TargetSeries:
        """A scrape's part that does not read its samples: the target's health; its series."""
        ts = self.series.get(target)
        if ts is None:
            ts = self.series[target] = TargetSeries(target, self.config.window_s)
        h = self.targets.setdefault(target, InputHealth())
        h.last_ok, h.error = at, ""
        h.note = (
            f"{skipped_count(parse_errors)} line(s) skipped (malformed or duplicate series): "
            f"{'; '.join(parse_errors[:3])}"
            if parse_errors
            else ""
        )
        self._dirty.update(COMPONENT_AREAS[target.component])
        return ts

    def scrape_arrived(self, target: Target, at: float) -> None:
        """Fold a ``MetricsScraped`` without parse errors except its samples: the clock and
        the target's health. Its samples follow in a :meth:`fold_scrapes` run, before any
        other scrape or removal of the target (a recording's seek, which folds a target's
        scrapes in bulk): together, the state :meth:`apply` of the event leaves.
        """
        self.now = max(self.now, at)
        self._arrived(target, at, ())

    def fold_scrapes(self, run: ScrapeRun) -> None:
        """Fold the samples of ``run``'s scrapes (their arrival noted by
        :meth:`scrape_arrived`), in order: their target's series and SLO counts, at a cost
        per series rather than per sample where the run allows (:meth:`TargetSeries.ingest_run`).
        """
        target = run.target
        ts = self.series[target]
        done = ts.ingest_run(run)
        if done is None:  # not a case taken in bulk: one scrape at a time
            for i, at in enumerate(run.ats):
                ts.ingest(at, run.samples(i))
                self._count_slos(ts, at)
        elif target.component is Component.APISERVER:
            budget = fold_run(self.slo_budgets.get(target.instance), done)
            if budget is not None:
                self.slo_budgets[target.instance] = budget

    def _scrape_failed(self, e: ev.ScrapeFailed) -> None:
        self.targets.setdefault(e.target, InputHealth()).error = e.reason
        self._dirty.update(COMPONENT_AREAS[e.target.component])

    def _target_gone(self, e: ev.TargetGone) -> None:
        self.series.pop(e.target, None)
        self.targets.pop(e.target, None)
        if e.target.component is Component.APISERVER:
            self.apf_dumps.pop(e.target.instance, None)
            self.apf_dump_health.pop(e.target.instance, None)
            self.apf_requests.drop(e.target.instance)
            self.slo_budgets.pop(e.target.instance, None)
            self.slo_days.pop(e.target.instance, None)
        self._dirty.update(COMPONENT_AREAS[e.target.component])

    def _slo_day(self, e: ev.SloDayCounted) -> None:
        self.slo_days[e.instance] = e
        self._feed_ok(ev.FEED_SLO_DAY, e.at)
        self._dirty.add(Area.APISERVERS)

    def _apf_dump(self, e: ev.ApfDumpRead) -> None:
        self.apf_dumps[e.instance] = e.levels
        h = self.apf_dump_health.setdefault(e.instance, InputHealth())
        h.last_ok, h.error = e.at, ""
        self._dirty.add(Area.APF)

    def _apf_requests(self, e: ev.ApfRequestsRead) -> None:
        self.apf_requests.read(e)
        self._dirty.add(Area.APF)

    def _apf_requests_failed(self, e: ev.ApfRequestsFailed) -> None:
        self.apf_requests.failed(e)
        self._dirty.add(Area.APF)

    def _apf_dump_failed(self, e: ev.ApfDumpFailed) -> None:
        self.apf_dump_health.setdefault(e.instance, InputHealth()).error = e.reason
        self._dirty.add(Area.APF)

    def _node(self, e: ev.NodeUpserted) -> None:
        self.nodes.upsert(e.node)
        self._feed_ok(ev.FEED_NODES, e.at)

    def _node_deleted(self, e: ev.NodeDeleted) -> None:
        self.nodes.delete(e.name)
        self._feed_ok(ev.FEED_NODES, e.at)

    def _lease(self, e: ev.LeaseRenewed) -> None:
        self.nodes.renew(e.node, e.renew_time, e.at)
        self._feed_ok(ev.FEED_LEASES, e.at)

    def renew_leases(
        self,
        names: Sequence[str],
        renew_times: Sequence[float],
        ats: Sequence[float],
        latest: float | None = None,
    ) -> None:
        """Fold the ``LeaseRenewed`` events ``(ats[i], names[i], renew_times[i])``, in order,
        at once: the state :meth:`apply` of each would leave (a recording's seek). ``latest``
        is the latest of ``ats`` when the caller knows it.
        """
        if not names:
            return
        self.renewals_seen(max(ats) if latest is None else latest, ats[-1])
        self.nodes.renew_many(names, renew_times, ats)

    def renewals_seen(self, latest: float, last: float) -> None:
        """What folding Lease renewals does besides storing their renew times: the clock
        moves to the latest time they were seen, the Lease feed is healthy as of the last.
        """
        self.now = max(self.now, latest)
        self._feed_ok(ev.FEED_LEASES, last)

    def renew_latest(self, renew_times: Mapping[str, float]) -> None:
        """Store each Lease's last renew time of renewals folded in order while Leases are
        not sampled (their clock and health noted by :meth:`renewals_seen`, each at its
        place): the Leases :meth:`apply` of every renewal would leave, as long as no
        ``NodeDeleted``, ``LeaseRenewed`` or ``LeasesSampled`` came between.
        """
        self.nodes.renew_latest(renew_times)

    def _leases_sampled(self, e: ev.LeasesSampled) -> None:
        self.nodes.sample(e.per_round, e.period_s)
        self._dirty.add(Area.NODES)

    def _pod(self, e: ev.PendingPodUpserted) -> None:
        self.pending.upsert(e.pod)
        self._feed_ok(ev.FEED_PENDING_PODS, e.at)

    def _pod_deleted(self, e: ev.PendingPodDeleted) -> None:
        self.pending.delete(e.namespace, e.name)
        self._feed_ok(ev.FEED_PENDING_PODS, e.at)

    def _warning(self, e: ev.WarningEvent) -> None:
        self.pending.warning(e)
        self._feed_ok(ev.FEED_EVENTS, e.at)

    def _quota(self, e: ev.QuotaUpserted) -> None:
        self.pending.quota(e.quota)
        self._feed_ok(ev.FEED_QUOTAS, e.at)

    def _quota_deleted(self, e: ev.QuotaDeleted) -> None:
        self.pending.quota_deleted(e.namespace, e.name)
        self._feed_ok(ev.FEED_QUOTAS, e.at)

    def _identities(self, e: ev.ApiserverIdentities) -> None:
        self.identities = e.identities
        self._feed_ok(ev.FEED_IDENTITIES, e.at)

    def _source(self, e: ev.SourceStarted) -> None:
        self.source_kind, self.context, self.source_detail = e.kind, e.context, e.detail
        if self.started_at is None:
            self.started_at = e.at
            if e.first_data_due_s is not None:
                self.first_data_due_s = e.first_data_due_s

    def _provider(self, e: ev.ProviderDetected) -> None:
        self.provider, self.provider_because = e.provider, e.because

    def _feed_ok(self, feed: str, at: float) -> None:
        h = self.feeds.get(feed)
        if h is None:
            h = self.feeds[feed] = InputHealth()
        h.last_ok = at
        h.error = ""  # data flows again: the last error is over
        self._dirty.add(FEED_AREAS.get(feed, Area.NODES))

    def _feed_synced(self, e: ev.FeedSynced) -> None:
        h = self.feeds.setdefault(e.feed, InputHealth())
        h.synced, h.error, h.last_ok = True, "", e.at
        self.listing.pop(e.feed, None)
        self._dirty.add(FEED_AREAS.get(e.feed, Area.NODES))

    def _feed_progress(self, e: ev.FeedProgress) -> None:
        self.feeds.setdefault(e.feed, InputHealth())  # read, not yet listed whole
        self.listing[e.feed] = (e.listed, e.expected)
        self._dirty.add(FEED_AREAS.get(e.feed, Area.NODES))

    def _feed_failed(self, e: ev.FeedFailed) -> None:
        self.feeds.setdefault(e.feed, InputHealth()).error = e.reason
        self._dirty.add(FEED_AREAS.get(e.feed, Area.NODES))

    def _objects_skipped(self, e: ev.ObjectsSkipped) -> None:
        note = f"{e.skipped_total} object(s) skipped (unreadable fields), e.g. {e.example}"
        self.feeds.setdefault(e.feed, InputHealth()).note = note
        self._dirty.add(FEED_AREAS.get(e.feed, Area.NODES))

    def _self_cost(self, e: ev.SelfCost) -> None:
        self.self_cost = e

    def _pace(self, e: ev.SimPace) -> None:
        self.pace = e

    def _backfilled(self, e: ev.HistoryBackfilled) -> None:
        self.history.backfill({k: pts for k, pts in e.series})

    def _metrics_only(self, e: ev.MetricsOnlyMode) -> None:
        self.metrics_only = e.why
        self._dirty.update(Area)

    def _readiness(self, e: ev.NodeReadinessByLabel) -> None:
        self.readiness[e.label] = e.rows
        self._feed_ok(ev.FEED_KUBE_STATE_METRICS, e.at)

    def _tick(self, e: ev.ClockTick) -> None:
        # Ages and lags grow with the clock even when nothing arrives. The nodes area does
        # not when nothing in it is timed by the clock: sampled Lease lags are as read, and
        # only not-Ready nodes show how long they have been so.
        if self.nodes.sampling is None or self.nodes.unhealthy:
            self._dirty.add(Area.NODES)
        step = clock_step(e.at)
        if step != self._clock_step:  # the scheduler area's ages and windows, in steps
            self._clock_step = step
            self._dirty.add(Area.SCHEDULER)
        lb = self._lb_shown()
        if lb != self._lb_was_shown:  # real instances went stale, or one is fresh again
            self._lb_was_shown = lb
            self._dirty.update(COMPONENT_AREAS[Component.APISERVER])


_HANDLED: dict[type, str] = {
    ev.MetricsScraped: "_scraped",
    ev.ScrapeFailed: "_scrape_failed",
    ev.TargetGone: "_target_gone",
    ev.ApfDumpRead: "_apf_dump",
    ev.ApfDumpFailed: "_apf_dump_failed",
    ev.ApfRequestsRead: "_apf_requests",
    ev.ApfRequestsFailed: "_apf_requests_failed",
    ev.NodeUpserted: "_node",
    ev.NodeDeleted: "_node_deleted",
    ev.LeaseRenewed: "_lease",
    ev.LeasesSampled: "_leases_sampled",
    ev.PendingPodUpserted: "_pod",
    ev.PendingPodDeleted: "_pod_deleted",
    ev.WarningEvent: "_warning",
    ev.QuotaUpserted: "_quota",
    ev.QuotaDeleted: "_quota_deleted",
    ev.ApiserverIdentities: "_identities",
    ev.SourceStarted: "_source",
    ev.ProviderDetected: "_provider",
    ev.FeedSynced: "_feed_synced",
    ev.FeedProgress: "_feed_progress",
    ev.FeedFailed: "_feed_failed",
    ev.ObjectsSkipped: "_objects_skipped",
    ev.SelfCost: "_self_cost",
    ev.SimPace: "_pace",
    ev.ClockTick: "_tick",
    ev.HistoryBackfilled: "_backfilled",
    ev.MetricsOnlyMode: "_metrics_only",
    ev.NodeReadinessByLabel: "_readiness",
    ev.SloDayCounted: "_slo_day",
}
"""The method of :class:`ClusterModel` that folds each event type."""


_TABLES: dict[type, dict[type, Callable[[Any, Any], None]]] = {}


def _handlers(cls: type[ClusterModel]) -> dict[type, Callable[[Any, Any], None]]:
    """The handlers of ``cls`` (a subclass may override them), by event type."""
    table = _TABLES.get(cls)
    if table is None:
        table = _TABLES[cls] = {kind: getattr(cls, name) for kind, name in _HANDLED.items()}
    return table
