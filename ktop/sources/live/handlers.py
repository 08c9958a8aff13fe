"""Handlers: the rows of each watched resource (its objects as
:class:`~ktop.sources.live.rows.Row`) to events.

Nodes are read as server-side Tables: the printed status (``Ready``, ``NotReady``,
``SchedulingDisabled``), and labels where a listed row carries its object's metadata,
for a fraction of a full Node's size. The printed status cannot tell Ready=False from
Ready=Unknown, and carries no taints or transition time, so a node whose status is not
Ready is fetched whole once it changes (rate-limited and capped by :class:`NodeDetails`);
until then it counts as NotReady (Ready=False), which is right for the zone-state rule
either way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from ktop.model.events import (
    ApiserverIdentities,
    Event,
    LeaseRenewed,
    NodeDeleted,
    NodeRecord,
    NodeUpserted,
    PendingPodDeleted,
    PendingPodUpserted,
    QuotaDeleted,
    QuotaUpserted,
    Readiness,
    WarningEvent,
    is_row,
    row_namespace,
)
from ktop.sources.convert import (
    EXCLUDE_DISRUPTION,
    REGION_LABELS,
    ZONE_LABELS,
    count,
    first_label,
    mapping,
    parse_time,
    pending_pod_record,
    pending_pod_row,
    quota_record,
    text,
)
from ktop.sources.live.node_split import Place
from ktop.sources.live.rows import Item, Row

TRIAGE_WARNING_REASONS = frozenset(
    {
        "FailedScheduling",
        "FailedCreate",
        "Failed",
        "BackOff",
        "FailedMount",
        "FailedAttachVolume",
        "FailedCreatePodSandBox",
        "FailedKillPod",
        "NodeNotReady",
        "Evicted",
    }
)
"""Warning reasons the triage paths read (scheduling, image pull, volumes, sandbox, nodes)."""


def _meta(item: Item) -> dict[str, Any]:
    return mapping(item, "metadata")


def _ns_name(item: Item) -> str:
    m = _meta(item)
    return f"{text(m, 'namespace')}/{text(m, 'name')}"


def node_place(labels: dict[str, Any], rack_label: str) -> Place:
    """A node's failure domain from its labels."""
    return (
        first_label(labels, REGION_LABELS),
        first_label(labels, ZONE_LABELS),
        sys.intern(text(labels, rack_label)),
        EXCLUDE_DISRUPTION in labels,
    )


def table_node_record(item: Item, rack_label: str, place: Place | None = None) -> NodeRecord:
    """A node from a Table row (readiness from the printed status); its place from the
    row's metadata, or ``place`` when the row came without it.
    """
    meta = _meta(item)
    if place is None:
        place = node_place(mapping(meta, "labels"), rack_label)
    status = text(mapping(item, "cells"), "Status")
    parts = set(status.split(","))
    if "Ready" in parts:
        ready = Readiness.TRUE
    elif "NotReady" in parts:
        ready = Readiness.FALSE
    else:
        ready = Readiness.UNKNOWN
    region, zone, rack, excluded = place
    return NodeRecord(
        name=text(meta, "name"),
        region=region,
        zone=zone,
        rack=rack,
        ready=ready,
        ready_since=None,
        unschedulable="SchedulingDisabled" in parts,
        exclude_disruption=excluded,
    )


class NodesHandler:
    """Nodes as Table rows; not-Ready nodes are detailed through ``want_detail``.

    Listed rows carry metadata (the node's labels: its place) or, in the list split by
    zone, the place their label selector decides (:attr:`Row.place`); watched rows carry
    neither (:attr:`Row.no_object`), so the place of each node listed is kept, and a node
    first seen in the watch is fetched whole before it is shown.
    """

    def __init__(self, rack_label: str, want_detail: Callable[[str], None]) -> None:
        self.rack_label = rack_label
        self.want_detail = want_detail
        self.detailed: dict[str, NodeRecord] = {}
        self.places: dict[str, Place] = {}
        self.not_ready: set[str] = set()
        """Nodes whose Ready condition is not True (their Leases are read every round)."""

    def key(self, row: Row) -> str:
        """The node name."""
        return text(_meta(row.item), "name")

    def upsert(self, at: float, row: Row) -> Sequence[Event]:
        """A Ready node as printed; a not-Ready one keeps its detail and asks for a refresh."""
        place = None
        if row.no_object:
            name = self.key(row)
            # a row of the node list split by zone carries its place (its selector's)
            place = row.place or self.places.get(name)
            if place is None:
                self.want_detail(name)  # new since the list: its labels come with it whole
                return []
        rec = table_node_record(row.item, self.rack_label, place)
        self.places[rec.name] = (rec.region, rec.zone, rec.rack, rec.exclude_disruption)
        if rec.ready is Readiness.TRUE:
            self.detailed.pop(rec.name, None)
            self.not_ready.discard(rec.name)
            return [NodeUpserted(at, rec)]
        self.not_ready.add(rec.name)
        self.want_detail(rec.name)
        known = self.detailed.get(rec.name)
        if known is not None:
            rec = NodeRecord(
                rec.name, rec.region, rec.zone, rec.rack, known.ready, known.ready_since,
                known.unreachable_taint, known.not_ready_taint, rec.unschedulable,
                rec.exclude_disruption,
            )  # fmt: skip
        return [NodeUpserted(at, rec)]

    def detail(self, at: float, rec: NodeRecord) -> Sequence[Event]:
        """A whole Node was fetched."""
        self.places[rec.name] = (rec.region, rec.zone, rec.rack, rec.exclude_disruption)
        if rec.ready is not Readiness.TRUE:
            self.detailed[rec.name] = rec
            self.not_ready.add(rec.name)
        else:
            self.not_ready.discard(rec.name)
        return [NodeUpserted(at, rec)]

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """The node is gone."""
        self.detailed.pop(key, None)
        self.places.pop(key, None)
        self.not_ready.discard(key)
        return [NodeDeleted(at, key)]


class LeasesHandler:
    """Node Leases in ``kube-node-lease``: the heartbeat."""

    def key(self, row: Row) -> str:
        """The lease (= node) name."""
        return text(_meta(row.item), "name")

    def upsert(self, at: float, row: Row) -> Sequence[Event]:
        """A renewal."""
        renew = parse_time(mapping(row.item, "spec").get("renewTime"))
        if renew is None:
            return []
        return [LeaseRenewed(at, self.key(row), renew)]

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """A lease disappears with its node; the node's deletion says it."""
        return []


class PendingPodsHandler:
    """Pods with ``status.phase=Pending``: unscheduled and bound-but-not-started.

    A long list comes as whole objects first, then as Table rows without objects
    (:attr:`ktop.sources.live.reads.Resource.whole_first`): a row names its pod but not its
    namespace, so it is keyed ``?/name`` (``?2/name`` for the second of that name in the
    list, see :func:`ktop.model.events.row_namespace`). A watch event names the pod whole;
    when that pod is not yet known as an object it was one of the rows of its name (it was
    Pending when the list was read, and the watch starts there), so one such row gives way
    to it: the count stays exact although a row cannot say which of its name it was. A pod
    the watch reports ``ADDED`` began to be Pending after the list, and takes no row's place.
    """

    def __init__(self) -> None:
        self.objects: set[str] = set()
        """``namespace/name`` of the pods known as objects."""
        self.rows: dict[str, set[str]] = {}
        """Pod name -> the row namespaces (``?``, ``?2``...) held for it."""

    def key(self, row: Row) -> str:
        """``namespace/name`` (``?n/name`` for a row without its object)."""
        if row.no_object:
            return f"{row_namespace(row.ordinal)}/{text(_meta(row.item), 'name')}"
        return _ns_name(row.item)

    def upsert(self, at: float, row: Row) -> Sequence[Event]:
        """A pending pod, or its end when it is no longer Pending."""
        if row.no_object:
            name = text(_meta(row.item), "name")
            pod = pending_pod_row(at, name, mapping(row.item, "cells"), row.ordinal)
            self.rows.setdefault(name, set()).add(pod.namespace)
            return [PendingPodUpserted(at, pod)]
        key = self.key(row)
        rec = pending_pod_record(row.item)
        ns, _, name = key.partition("/")
        out = [] if row.added else self._instead_of_row(at, key, name)
        if rec is None:
            self.objects.discard(key)
            out.append(PendingPodDeleted(at, ns, name))
        else:
            self.objects.add(key)
            out.append(PendingPodUpserted(at, rec))
        return out

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """The pod left Pending (or was deleted)."""
        ns, _, name = key.partition("/")
        if is_row(ns):
            self._drop_row(name, ns)
            return [PendingPodDeleted(at, ns, name)]
        out = self._instead_of_row(at, key, name)
        self.objects.discard(key)
        out.append(PendingPodDeleted(at, ns, name))
        return out

    def _instead_of_row(self, at: float, key: str, name: str) -> list[Event]:
        """When ``key`` is not known as an object: the deletion of one row of its name
        (the last of them), if any is held.
        """
        held = self.rows.get(name)
        if key in self.objects or not held:
            return []
        ns = max(held, key=lambda n: (len(n), n))
        self._drop_row(name, ns)
        return [PendingPodDeleted(at, ns, name)]

    def _drop_row(self, name: str, ns: str) -> None:
        """Forget the row ``ns/name`` (if held)."""
        held = self.rows.get(name)
        if held is not None:
            held.discard(ns)
            if not held:
                del self.rows[name]


class WarningEventsHandler:
    """Warning Events whose reasons the triage paths read."""

    def key(self, row: Row) -> str:
        """``namespace/name`` of the Event."""
        return _ns_name(row.item)

    def upsert(self, at: float, row: Row) -> Sequence[Event]:
        """A Warning event of interest."""
        item = row.item
        reason = text(item, "reason")
        if reason not in TRIAGE_WARNING_REASONS:
            return []
        inv = mapping(item, "involvedObject")
        return [
            WarningEvent(
                at=at,
                reason=sys.intern(reason),
                namespace=text(inv, "namespace") or text(_meta(item), "namespace"),
                object_kind=text(inv, "kind"),
                object_name=text(inv, "name"),
                message=text(item, "message"),
                count=count(item, "count", 1),
            )
        ]

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """Events expire; nothing to report."""
        return []


class QuotasHandler:
    """ResourceQuotas, all namespaces."""

    def key(self, row: Row) -> str:
        """``namespace/name``."""
        return _ns_name(row.item)

    def upsert(self, at: float, row: Row) -> Sequence[Event]:
        """A quota's used and hard amounts."""
        return [QuotaUpserted(at, quota_record(row.item))]

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """The quota is gone."""
        ns, _, name = key.partition("/")
        return [QuotaDeleted(at, ns, name)]


class IdentitiesHandler:
    """apiserver identity Leases: the set of running apiservers, re-sent on each change."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def key(self, row: Row) -> str:
        """The lease name (``apiserver-<hash>``)."""
        return text(_meta(row.item), "name")

    def _now(self, at: float) -> Sequence[Event]:
        return [ApiserverIdentities(at, tuple(sorted(self.names)))]

    def upsert(self, at: float, row: Row) -> Sequence[Event]:
        """An identity renewed or appeared."""
        name = self.key(row)
        if name in self.names:
            return []
        self.names.add(name)
        return self._now(at)

    def delete(self, at: float, key: str) -> Sequence[Event]:
        """An apiserver went away (its identity Lease was garbage-collected)."""
        self.names.discard(key)
        return self._now(at)
