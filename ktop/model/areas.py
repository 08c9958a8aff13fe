"""The area registry: one :class:`AreaSpec` per signal area, the facts every layer reads
about it (its names, its part of finding codes, its part of a snapshot, when it was not
read, which of its subjects can be read, its charts).

Every per-area table of the model, analysis and UI derives from :data:`AREAS`; the UI's
own half (keys, panel and drill-down renderers) is ``AREA_VIEWS`` in
``ktop/ui/render/areas.py``, keyed by the same areas. How to add an area:
docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ktop.model.reading import Reading
from ktop.model.signal_areas import Area
from ktop.model.signals import area_charts
from ktop.model.snapshot import ClusterSnapshot


@dataclass(frozen=True, slots=True)
class Readable:
    """Which subjects of an area's readings can be read now, or why none can."""

    names: frozenset[str] | None = None
    """The subjects that can be read (None: every subject a reading gives)."""
    why_none: str | None = None
    """Why no subject can be read (None when some can)."""

    @classmethod
    def every(cls) -> Readable:
        """Every subject can be read."""
        return cls()

    @classmethod
    def only(cls, names: Iterable[str]) -> Readable:
        """Only these subjects can be read."""
        return cls(names=frozenset(names))

    @classmethod
    def none(cls, why: str) -> Readable:
        """No subject can be read, for this reason."""
        return cls(why_none=why)

    def keeps(self, subject: str) -> bool:
        """Whether ``subject`` can be read."""
        return self.why_none is None and (self.names is None or subject in self.names)


@dataclass(frozen=True, slots=True)
class AreaSpec:
    """One signal area: what it is called, its part of a snapshot and of finding codes,
    and how to tell that it, or a subject of it, could not be read.
    """

    area: Area
    short: str
    """Its name on the status line and the key bar (``api``)."""
    name: str
    """Its name on its overview panel's border (``apiservers``)."""
    title: str
    """Its drill-down's title (``kube-apiserver instances``)."""
    help: str
    """What its drill-down shows (the help screen, the command palette, README's keys)."""
    code: str
    """Its part of finding codes: ``KT-<code>-NNN`` (``API``)."""
    subject: str
    """What the subjects of its readings are called in triage evidence (``instance``)."""
    view: Callable[[ClusterSnapshot], object]
    """Its part of a snapshot (built by ``BUILDERS`` in ``ktop/model/cluster_views.py``)."""
    unread: Callable[[ClusterSnapshot], bool]
    """Whether it could not be read at all: its ``-010`` finding says so, and none of its
    readings is graded."""
    readable: Callable[[ClusterSnapshot], Readable]
    """Which subjects of its readings triage evidence may grade."""

    @property
    def input_unknown_code(self) -> str:
        """The code of its finding when an input of it fails (``KT-API-010``)."""
        return f"KT-{self.code}-010"

    @property
    def baseline_code(self) -> str:
        """The code of its finding when a reading is far above its own normal."""
        return f"KT-{self.code}-020"

    @property
    def charts(self) -> tuple[Reading, ...]:
        """The readings it charts, most telling first."""
        return area_charts(self.area)


def _apf_readable(s: ClusterSnapshot) -> Readable:
    a = s.apf
    if a.unknown_reason:
        return Readable.none(a.unknown_reason)
    return Readable.only(r.priority_level for r in a.levels)


def _apiservers_readable(s: ClusterSnapshot) -> Readable:
    a = s.apiservers
    if not a.instances:
        return Readable.none(a.unknown_reason or "no apiserver seen")
    if not a.answering:
        return Readable.none("; ".join(f"{r.instance}: {r.error}" for r in a.instances))
    return Readable.only(r.instance for r in a.answering)


def _etcd_readable(s: ClusterSnapshot) -> Readable:
    e = s.etcd
    if e.unknown_reason:
        return Readable.none(e.unknown_reason)
    if not e.answering:
        return Readable.none(
            "; ".join(f"{m.instance}: {m.error}" for m in e.members) or "no member"
        )
    return Readable.only(m.instance for m in e.answering)


def _nodes_unread(s: ClusterSnapshot) -> bool:
    return s.nodes.metrics_only is not None or not s.nodes.nodes_known


def _nodes_readable(s: ClusterSnapshot) -> Readable:
    if _nodes_unread(s):
        return Readable.none(s.nodes.nodes_reason or "nodes not listed")
    return Readable.every()


_SPECS = (
    AreaSpec(
        Area.APF,
        short="apf",
        name="APF",
        title="API Priority and Fairness",
        help="APF: priority levels, flow schemas, per instance",
        code="APF",
        subject="priority level",
        view=lambda s: s.apf,
        unread=lambda s: bool(s.apf.unknown_reason),
        readable=_apf_readable,
    ),
    AreaSpec(
        Area.APISERVERS,
        short="api",
        name="apiservers",
        title="kube-apiserver instances",
        help="apiserver instances side by side",
        code="API",
        subject="instance",
        view=lambda s: s.apiservers,
        unread=lambda s: False,
        readable=_apiservers_readable,
    ),
    AreaSpec(
        Area.ETCD,
        short="etcd",
        name="etcd",
        title="etcd members",
        help="etcd members",
        code="ETCD",
        subject="member",
        view=lambda s: s.etcd,
        unread=lambda s: bool(s.etcd.unknown_reason),
        readable=_etcd_readable,
    ),
    AreaSpec(
        Area.SCHEDULER,
        short="sched",
        name="scheduler",
        title="Scheduler: pending pods",
        help="scheduler: pending reasons, wait categories, quota",
        code="SCHED",
        subject="scheduler reading",
        view=lambda s: s.scheduler,
        unread=lambda s: False,
        readable=lambda s: Readable.every(),
    ),
    AreaSpec(
        Area.NODES,
        short="nodes",
        name="nodes",
        title="Nodes by failure domain",
        help="nodes: zones, racks, NotReady nodes",
        code="NODE",
        subject="zone",
        view=lambda s: s.nodes,
        unread=_nodes_unread,
        readable=_nodes_readable,
    ),
)

AREAS: dict[Area, AreaSpec] = {spec.area: spec for spec in _SPECS}
"""Every area's spec, in the overview's order (the order of :class:`Area`)."""
