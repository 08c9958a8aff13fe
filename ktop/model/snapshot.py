"""Immutable snapshots: what the model hands to analysis and views.

A snapshot never shares mutable state with the model. Views render it;
analysis reads it; neither can change it. Formulas for every field are in
``docs/panes.md``.

This module holds the whole (:class:`ClusterSnapshot`) and how fresh its inputs are;
each area's part is in its own module: :mod:`ktop.model.snapshot_apf`,
:mod:`ktop.model.snapshot_apiservers`, :mod:`ktop.model.snapshot_etcd`,
:mod:`ktop.model.snapshot_scheduler` and :mod:`ktop.model.snapshot_nodes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ktop.model.history import EMPTY_HISTORY, HistoryView
from ktop.model.leaders import LeaderStatus
from ktop.model.series import WINDOW_S
from ktop.model.signal_areas import Area
from ktop.model.snapshot_apf import ApfSnapshot
from ktop.model.snapshot_apiservers import ApiserversSnapshot
from ktop.model.snapshot_etcd import EtcdSnapshot
from ktop.model.snapshot_nodes import NodesSnapshot
from ktop.model.snapshot_scheduler import SchedulerSnapshot
from ktop.model.source_events import SelfCost, SimPace

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
real apiserver instance no longer hides the load-balanced reads
(``ktop/model/cluster_views.py``)."""


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
    listing: bool = False
    """A feed of objects whose first list is under way: what it delivered is only part."""

    def age_s(self, now: float) -> float | None:
        """Seconds since the input last delivered data, or None if it never did."""
        return None if self.last_ok is None else max(0.0, now - self.last_ok)


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
    provider: str = ""
    """Who runs the control plane (a :class:`~ktop.model.providers.Provider` value);
    empty before it is known and for sources that do not say."""
    provider_because: str = ""
    """The fact that named the provider (``apiserver version v1.30.4-eks-…``)."""
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
