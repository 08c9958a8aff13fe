"""How the cluster model builds its snapshots: each area from the state the model folded,
rebuilt only when one of its inputs changed (the read side of
:class:`~ktop.model.cluster.ClusterModel`, which folds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ktop.model import events as ev
from ktop.model.area_apf import build_apf
from ktop.model.area_apiservers import build_apiservers
from ktop.model.area_etcd import build_etcd
from ktop.model.area_etcd_client import build_etcd_client_view
from ktop.model.area_metrics_only import (
    build_metrics_only_nodes,
    build_metrics_only_scheduler,
    interim_zones,
)
from ktop.model.area_nodes import NodesConfig, NodesState, build_nodes
from ktop.model.area_scheduler import PendingPods, bindings_per_s, build_scheduler
from ktop.model.area_talkers import TalkerWindow
from ktop.model.clock import clock_step
from ktop.model.events import Area, Component, Target
from ktop.model.feeds import OBJECT_FEEDS
from ktop.model.history import History
from ktop.model.leaders import ELECTED, build_leader
from ktop.model.model_inputs import FEED_AREAS, INPUT_AREAS, InputHealth, ModelConfig
from ktop.model.series import TargetSeries
from ktop.model.signals import read_signals
from ktop.model.slo_budget import DAY_FRESH_S, InstanceBudget
from ktop.model.snapshot import STALE_AFTER_S, ClusterSnapshot, Freshness
from ktop.model.snapshot_nodes import InterimZones
from ktop.model.text import listing_text


class AreaViews:
    """The snapshot side of the cluster model: builds each area's snapshot from the
    model's state (declared here, set and folded by
    :class:`~ktop.model.cluster.ClusterModel`).
    """

    config: ModelConfig
    now: float
    source_kind: str
    context: str
    source_detail: str
    provider: str
    provider_because: str
    started_at: float | None
    first_data_due_s: float
    series: dict[Target, TargetSeries]
    targets: dict[Target, InputHealth]
    apf_dumps: dict[str, tuple[ev.ApfLevelDump, ...]]
    apf_dump_health: dict[str, InputHealth]
    apf_requests: TalkerWindow
    feeds: dict[str, InputHealth]
    nodes: NodesState
    pending: PendingPods
    self_cost: ev.SelfCost | None
    pace: ev.SimPace | None
    history: History
    identities: tuple[str, ...] | None
    metrics_only: str
    readiness: dict[str, tuple[tuple[str, int, int], ...]]
    slo_budgets: dict[str, InstanceBudget]
    slo_days: dict[str, ev.SloDayCounted]
    _nodes_cfg: NodesConfig
    _dirty: set[Area]
    _cache: dict[Area, Any]
    _seq: int
    _waiting_shown: str
    listing: dict[str, tuple[int, int | None]]

    def _lb_shown(self) -> bool:
        """True when the data read through the load-balanced address is the apiservers'
        data: it was read, and no real instance is fresh (delivered within
        ``STALE_AFTER_S``). Exactly one of the two is shown and summed, never both:
        real instances while any is fresh (even when the load-balanced reads are
        newer), else the load-balanced reads (e.g. Prometheus, which named the
        instances, died).
        """
        lb = ev.LOAD_BALANCED
        if Target(Component.APISERVER, lb) not in self.targets and lb not in self.apf_dump_health:
            return False
        real = [
            h
            for t, h in self.targets.items()
            if t.component is Component.APISERVER and t.instance != lb
        ]
        real += [h for i, h in self.apf_dump_health.items() if i != lb]
        return not any(
            h.last_ok is not None and self.now - h.last_ok <= STALE_AFTER_S for h in real
        )

    @staticmethod
    def _shown(component: Component, instance: str, lb_shown: bool) -> bool:
        """Whether an instance's data is shown and summed (see :meth:`_lb_shown`)."""
        if component is not Component.APISERVER:
            return True
        return lb_shown if instance == ev.LOAD_BALANCED else not lb_shown

    def _component(
        self, component: Component
    ) -> tuple[dict[str, TargetSeries], dict[str, tuple[float | None, str]]]:
        lb = self._lb_shown()
        series = {
            t.instance: s
            for t, s in self.series.items()
            if t.component is component and self._shown(component, t.instance, lb)
        }
        health = {
            t.instance: (h.last_ok, h.error)
            for t, h in self.targets.items()
            if t.component is component and self._shown(component, t.instance, lb)
        }
        return series, health

    def _dumps(self) -> dict[str, tuple[ev.ApfLevelDump, ...]]:
        lb = self._lb_shown()
        return {i: d for i, d in self.apf_dumps.items() if self._shown(Component.APISERVER, i, lb)}

    def _feed_state(self, feed: str) -> tuple[bool, str]:
        h = self.feeds.get(feed)
        if h is None:
            return False, f"{feed} not read by this source"
        if h.error:
            return h.synced, h.error
        return (h.synced or h.last_ok is not None), ""

    def _build(self, area: Area) -> Any:
        return BUILDERS[area](self)

    def _waiting(self) -> str:
        """Why a component with no series yet is unknown while its first scrape is not
        due (:attr:`first_data_due_s` after the start); empty after that.
        """
        due = self.first_data_due_s
        if self.started_at is None or self.now - self.started_at > due:
            return ""
        return f"waiting for the first scrape (due within {due:g} s of the start)"

    def _build_apf(self) -> Any:
        series, health = self._component(Component.APISERVER)
        errors = [e for _, e in health.values() if e]
        snap = build_apf(series, self._dumps(), "; ".join(errors) or self._waiting())
        lb = self._lb_shown()
        shown = {
            i for i in self.apf_requests.readings if self._shown(Component.APISERVER, i, lb)
        } | {i for i in self.apf_requests.errors if self._shown(Component.APISERVER, i, lb)}
        return replace(snap, talkers=self.apf_requests.view(self.now, shown, self._waiting()))

    def _build_apiservers(self) -> Any:
        series, health = self._component(Component.APISERVER)
        days = {i: d for i, d in self.slo_days.items() if self.now - d.at <= DAY_FRESH_S}
        snap = build_apiservers(series, health, self._waiting(), self.slo_budgets, days)
        ids = None if self.identities is None else len(self.identities)
        return replace(snap, identities=ids)

    def _build_etcd(self) -> Any:
        series, health = self._component(Component.ETCD)
        members = build_etcd(series, health, self._waiting())
        apiservers, _ = self._component(Component.APISERVER)
        view = build_etcd_client_view(apiservers)
        # No apiserver exposes etcd client metrics: the members' reason says enough.
        return replace(members, apiserver_view=None if view.unknown_reason else view)

    def _build_scheduler(self) -> Any:
        apiservers, _ = self._component(Component.APISERVER)
        return replace(self._scheduler(), bindings_per_s=bindings_per_s(apiservers))

    def _first_list(self, feed: str) -> tuple[int, int | None] | None:
        """How far ``feed``'s first list is (listed, expected) while it is under way; None
        once listed (a relist after a 410 keeps what the feed had meanwhile).
        """
        health = self.feeds.get(feed)
        return None if health is None or health.synced else self.listing.get(feed)

    def _scheduler(self) -> Any:
        series, health = self._component(Component.SCHEDULER)
        known, reason = self._feed_state(ev.FEED_PENDING_PODS)
        failures = "; ".join(e for _, e in health.values() if e) or (
            "" if series else self._waiting()
        )
        quotas_known, _ = self._feed_state(ev.FEED_QUOTAS)
        events_known, _ = self._feed_state(ev.FEED_EVENTS)
        listed = self._first_list(ev.FEED_PENDING_PODS)
        if listed is not None:  # part of the pending pods: not known yet
            known, reason = False, reason or listing_text("pending pods", *listed)
        if self.metrics_only:
            reason = f"metrics-only ({self.metrics_only}): pods are not read"
            sched_view = build_metrics_only_scheduler(self.metrics_only, series, failures)
            return replace(
                build_scheduler(
                    series, self.pending, clock_step(self.now), False, reason, failures,
                    zone_of=self._zone_of,
                ),
                metrics_only=sched_view,
            )  # fmt: skip
        return build_scheduler(
            series,
            self.pending,
            clock_step(self.now),
            known,
            reason,
            failures,
            quotas_known,
            zone_of=self._zone_of,
            events_known=events_known,
        )

    def _build_nodes(self) -> Any:
        nodes_known, nodes_reason = self._feed_state(ev.FEED_NODES)
        leases_known, _ = self._feed_state(ev.FEED_LEASES)
        if self.metrics_only:
            return self._metrics_only_nodes()
        listed = self._first_list(ev.FEED_NODES)
        if listed is not None:  # part of the nodes: not known, however healthy they look
            nodes_known = False
            nodes_reason = nodes_reason or listing_text("nodes", *listed)
        snap = build_nodes(
            self.nodes,
            self.now,
            self._nodes_cfg,
            nodes_known=nodes_known,
            nodes_reason=nodes_reason,
            leases_known=leases_known,
        )
        return replace(snap, listed=listed, interim=self._interim_zones(nodes_known))

    def _interim_zones(self, nodes_known: bool) -> InterimZones | None:
        """The node lifecycle controller's zones while ktop's own node list has not
        completed (its first list under way, or the feed never synced); None once it has.
        Only controller-managers whose last scrape succeeded count: stale zones are not
        the cheapest source that is right.
        """
        health = self.feeds.get(ev.FEED_NODES)
        if nodes_known or (health is not None and health.synced):
            return None
        series, scrapes = self._component(Component.CONTROLLER_MANAGER)
        ok = {i: s for i, s in series.items() if i not in scrapes or not scrapes[i][1]}
        return interim_zones(ok, self.config.unhealthy_zone_threshold)

    def _metrics_only_nodes(self) -> Any:
        series, health = self._component(Component.CONTROLLER_MANAGER)
        failures = "; ".join(e for _, e in health.values() if e)
        _, ksm_reason = self._feed_state(ev.FEED_KUBE_STATE_METRICS)
        view = build_metrics_only_nodes(
            self.metrics_only,
            series,
            failures,
            self.readiness,
            ksm_reason,
            self.config.unhealthy_zone_threshold,
        )
        reason = f"metrics-only ({self.metrics_only}): nodes are not read"
        snap = build_nodes(
            NodesState(),
            self.now,
            self._nodes_cfg,
            nodes_known=False,
            nodes_reason=reason,
            leases_known=False,
        )
        return replace(snap, metrics_only=view)

    def _freshness(self) -> tuple[Freshness, ...]:
        out: list[Freshness] = []
        # Real instances are listed even while their stale data is not shown: their
        # errors say why the load-balanced reads are.
        lb_hidden = not self._lb_shown()
        for t, h in sorted(self.targets.items(), key=lambda kv: (kv[0].component, kv[0].instance)):
            if lb_hidden and t == Target(Component.APISERVER, ev.LOAD_BALANCED):
                continue
            for area in INPUT_AREAS[t.component]:
                name = f"{t.component} {t.instance}"
                out.append(Freshness(name, area, h.last_ok, h.error, h.note))
        for inst, h in sorted(self.apf_dump_health.items()):
            if lb_hidden and inst == ev.LOAD_BALANCED:
                continue
            out.append(Freshness(f"apf dump {inst}", Area.APF, h.last_ok, h.error))
        for feed, h in sorted(self.feeds.items()):
            # A synced watch without an error is current even when nothing changed:
            # a dead stream is detected by the source and reported as FeedFailed.
            last = self.now if (h.synced and not h.error) else h.last_ok
            listing = feed in OBJECT_FEEDS and not h.synced and not h.error
            area = FEED_AREAS.get(feed, Area.NODES)
            out.append(Freshness(feed, area, last, h.error, h.note, listing=listing))
        return tuple(out)

    def _zone_of(self, node: str) -> str:
        rec = self.nodes.nodes.get(node)
        return rec.zone if rec is not None else ""

    def observe(self) -> ClusterSnapshot:
        """:meth:`snapshot`, its signals added to the history as one frame (the hub does
        this once per publish: the history's cadence is the screen's).
        """
        snap = self._snapshot()
        self.history.record(self.now, read_signals(snap))
        return replace(snap, history=self.history.view())

    def snapshot(self) -> ClusterSnapshot:
        """An immutable snapshot (unchanged areas reuse their previous one); its history is
        as of the last :meth:`observe`, and the history is left as it is.
        """
        return replace(self._snapshot(), history=self.history.view())

    def _snapshot(self) -> ClusterSnapshot:
        if self._waiting() != self._waiting_shown:  # the first data fell due: say so
            self._waiting_shown = self._waiting()
            self._dirty.update(Area)
        for area in Area:
            if area in self._dirty or area not in self._cache:
                self._cache[area] = self._build(area)
        self._dirty.clear()
        self._seq += 1
        snap = ClusterSnapshot(
            at=self.now,
            source_kind=self.source_kind,
            context=self.context,
            source_detail=self.source_detail,
            provider=self.provider,
            provider_because=self.provider_because,
            started_at=self.started_at,
            first_data_due_s=self.first_data_due_s,
            apf=self._cache[Area.APF],
            apiservers=self._cache[Area.APISERVERS],
            etcd=self._cache[Area.ETCD],
            scheduler=self._cache[Area.SCHEDULER],
            nodes=self._cache[Area.NODES],
            freshness=self._freshness(),
            window_s=self.config.window_s,
            seq=self._seq,
            self_cost=self.self_cost,
            pace=self.pace,
            leaders=tuple(build_leader(c, *self._component(c)) for c in ELECTED),
        )
        return snap


BUILDERS: dict[Area, Callable[[AreaViews], Any]] = {
    Area.APF: AreaViews._build_apf,
    Area.APISERVERS: AreaViews._build_apiservers,
    Area.ETCD: AreaViews._build_etcd,
    Area.SCHEDULER: AreaViews._build_scheduler,
    Area.NODES: AreaViews._build_nodes,
}
"""How each area's part of a snapshot is built from the model's state (the part
:attr:`ktop.model.areas.AreaSpec.view` reads), rebuilt only when the area is dirty."""
