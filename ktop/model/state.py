"""The whole model state as plain data, and back (recording keyframes).

``export_state`` turns a :class:`ClusterModel` into a dictionary of
*sections* holding only strings, numbers, booleans, ``None``, lists and
string-keyed dictionaries; ``import_state`` builds a model that gives the
same snapshots and evolves the same way under the same later events.

Contract for whoever adds state to the model (e.g. history ring buffers):

* every attribute of ``ClusterModel`` is either exported in a section
  named after it, or listed in :data:`DERIVED` (rebuilt, not stored);
  ``tests/unit/test_model_state.py`` fails for an attribute that is
  neither;
* a new section is a new key: ``import_state`` treats a missing section as
  empty (a keyframe from an older ktop) and ignores unknown sections (a
  keyframe from a newer ktop), so adding state never breaks old files;
* a section's own layout may change only by adding trailing list items or
  new keys, for the same reason; any other change bumps :data:`STATE_VERSION` and
  keeps reading the older layout (version 2 stores the series and the nodes as
  columns, :mod:`ktop.model.state_columns`; version 1 is read as it was written).

Derived indexes (per-domain node counts, the not-Ready set) are rebuilt by
re-inserting the primary records, so they are never stored.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any, Protocol

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.history import History
from ktop.model.model_inputs import InputHealth, ModelConfig
from ktop.model.plaindata import builder, from_plain, to_plain
from ktop.model.series import TargetSeries
from ktop.model.series_window import SeriesPoints
from ktop.model.slo_budget import InstanceBudget
from ktop.model.state_columns import (
    leases_in,
    node_records,
    nodes_in,
    nodes_out,
    series_in,
    series_out,
)

STATE_VERSION = 2
"""Bumped only for a change an older reader would misread (never for additions): 2 stores
the series and the nodes as columns (:mod:`ktop.model.state_columns`); version 1 states
(recordings before format version 3) are read as they were written."""

DERIVED = frozenset(
    {
        "config",
        "_nodes_cfg",
        "_dirty",
        "_cache",
        "_handlers",
        "_lb_was_shown",
        "_clock_step",
        "_waiting_shown",
    }
)
"""Attributes of ``ClusterModel`` that are not stored: rebuilt from config or other state."""

Plain = Any


def _health(h: InputHealth) -> list[Any]:
    return [h.last_ok, h.error, h.synced, h.note]


def _unhealth(v: list[Any]) -> InputHealth:
    last_ok, error, synced, note = (list(v) + [None, "", False, ""][len(v) :])[:4]
    return InputHealth(None if last_ok is None else float(last_ok), error, synced, note)


def _series_in(v: list[Any]) -> TargetSeries:
    """A target's series as state version 1 stored them: values as plain numbers."""
    component, instance, window_s, last_at, scrapes, times, rows = v[:7]
    ts = TargetSeries(ev.Target(ev.Component(component), instance), float(window_s))
    ts.last_at = None if last_at is None else float(last_at)
    ts.scrapes = int(scrapes)
    ftimes = list(map(float, times))
    ts.scrape_times = deque(ftimes)  # every point's time: the scrapes in the window
    for name, labels, where, values in rows:
        key = tuple([(str(k), str(val)) for k, val in labels])
        if isinstance(where, int) and where >= 0 and where + len(values) <= len(ftimes):
            at = ftimes[where : where + len(values)]  # contiguous: the times from ``where`` on
        else:
            idx = list(range(where, where + len(values))) if isinstance(where, int) else where
            at = list(map(ftimes.__getitem__, idx))
        if len(values) != len(at):
            raise ValueError(f"expected {len(at)} values, got {len(values)}")
        ts._series.setdefault(name, {})[key] = SeriesPoints(at, list(map(float, values)))
    return ts


_READINESS = {r.value: r for r in ev.Readiness}
_NODE_FIELDS = len(dataclasses.fields(ev.NodeRecord))


def keyframe_nodes(state: dict[str, Plain]) -> list[ev.NodeRecord]:
    """The node records of a state (of any version), in order."""
    nodes = state.get("nodes", {})
    if int(state.get("version", STATE_VERSION)) >= 2:
        return node_records(nodes)
    return _node_records(nodes.get("nodes", []))


def _node_records(rows: list[Any]) -> list[ev.NodeRecord]:
    """Node records from plain data, as :func:`from_plain` makes them (a row of every
    field made directly, without walking the field types).
    """
    out: list[ev.NodeRecord] = []
    append = out.append
    node = builder(ev.NodeRecord)
    for r in rows:
        if type(r) is list and len(r) == _NODE_FIELDS:
            name, region, zone, rack, ready, since, unreachable, not_ready, cordoned, excluded = r
            append(
                node(
                    name,
                    region,
                    zone,
                    rack,
                    _READINESS.get(ready) or ev.Readiness(ready),
                    None if since is None else float(since),
                    unreachable,
                    not_ready,
                    cordoned,
                    excluded,
                )
            )
        else:  # an older or newer writer's row: fewer or more fields
            append(from_plain(ev.NodeRecord, r))
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class Keyframe:
    """The model's whole state at one instant, as a recording stores it."""

    at: float
    state: dict[str, Plain]
    """:func:`export_state`'s plain data."""
    nodes: dict[str, ev.NodeRecord]
    """The node records (a copy): later node events are written as changes to these."""


class StateView(Protocol):
    """What a recording reads of the state it records: the clock, the model's settings
    and a keyframe on demand (the hub offers it; a bare model through :class:`ModelState`).
    """

    @property
    def now(self) -> float:
        """The source clock."""
        ...

    @property
    def config(self) -> ModelConfig:
        """The model's settings (a replay must use the same)."""
        ...

    def keyframe(self) -> Keyframe:
        """The state now."""
        ...


def keyframe_of(model: ClusterModel) -> Keyframe:
    """``model``'s keyframe now."""
    return Keyframe(model.now, export_state(model), dict(model.nodes.nodes))


@dataclasses.dataclass(frozen=True, slots=True)
class ModelState:
    """A model that nothing else folds into, seen as a :class:`StateView` (a recording's
    own shadow model, a test's model).
    """

    model: ClusterModel

    @property
    def now(self) -> float:  # noqa: D102
        return self.model.now

    @property
    def config(self) -> ModelConfig:  # noqa: D102
        return self.model.config

    def keyframe(self) -> Keyframe:  # noqa: D102
        return keyframe_of(self.model)


def state_view(state: StateView | ClusterModel) -> StateView:
    """``state`` as a :class:`StateView`."""
    return ModelState(state) if isinstance(state, ClusterModel) else state


def export_state(model: ClusterModel) -> dict[str, Plain]:
    """The model's state as plain data (see the module docstring for the contract)."""
    return {
        "version": STATE_VERSION,
        "now": model.now,
        "source_kind": model.source_kind,
        "context": model.context,
        "source_detail": model.source_detail,
        "provider": model.provider,
        "provider_because": model.provider_because,
        "started_at": model.started_at,
        "first_data_due_s": model.first_data_due_s,
        "series": [series_out(ts) for ts in model.series.values()],
        "targets": [[to_plain(t), _health(h)] for t, h in model.targets.items()],
        "apf_dumps": [[i, [to_plain(x) for x in d]] for i, d in model.apf_dumps.items()],
        "apf_dump_health": [[i, _health(h)] for i, h in model.apf_dump_health.items()],
        "apf_requests": [[to_plain(r) for r in q] for q in model.apf_requests.readings.values()],
        "apf_requests_errors": [[i, why] for i, why in model.apf_requests.errors.items()],
        "feeds": [[f, _health(h)] for f, h in model.feeds.items()],
        "listing": [[f, n, of] for f, (n, of) in model.listing.items()],
        "nodes": nodes_out(model.nodes),
        "pending": {
            "pods": [to_plain(p) for p in model.pending.pods.values()],
            "quota_rejections": [list(x) for x in model.pending._quota],
            "quotas": [to_plain(q) for q in model.pending.quotas.values()],
        },
        "_seq": model._seq,
        "self_cost": None if model.self_cost is None else to_plain(model.self_cost),
        "pace": None if model.pace is None else to_plain(model.pace),
        "identities": None if model.identities is None else list(model.identities),
        "metrics_only": model.metrics_only,
        "readiness": [[label, [list(r) for r in rows]] for label, rows in model.readiness.items()],
        "history": _history_out(model.history, KEYFRAME_HISTORY_STEP_S),
        "slo_budgets": [[i, to_plain(b)] for i, b in model.slo_budgets.items()],
        "slo_days": [to_plain(d) for d in model.slo_days.values()],
    }


KEYFRAME_HISTORY_STEP_S = 15.0
"""Keyframes keep the signal history at this resolution: a seek shows the hour before
the keyframe at 15 s (the events after it refill 1 s frames), and an hour of keyframes
costs about a megabyte instead of a full-resolution copy of the history in each."""


def _history_out(history: History, step_s: float) -> dict[str, Plain]:
    """The history as plain data, thinned to one frame per ``step_s`` (the last kept)."""
    state = history.to_state()
    times: list[float] = state["times"]
    keep: list[int] = []
    for i, t in enumerate(times):
        if not keep or t - times[keep[-1]] >= step_s or i == len(times) - 1:
            keep.append(i)
    state["times"] = [times[i] for i in keep]
    state["series"] = {k: [col[i] for i in keep] for k, col in state["series"].items()}
    return state


def import_state(state: dict[str, Plain], config: ModelConfig | None = None) -> ClusterModel:
    """A model in the state ``state`` describes (missing sections are empty)."""
    version = int(state.get("version", STATE_VERSION))
    if version > STATE_VERSION:
        raise ValueError(
            f"model state version {version} is newer than this ktop reads ({STATE_VERSION})"
        )
    m = ClusterModel(config)
    m.now = float(state.get("now", 0.0))
    m.source_kind = state.get("source_kind", "")
    m.context = state.get("context", "")
    m.source_detail = state.get("source_detail", "")
    m.provider = str(state.get("provider", ""))
    m.provider_because = str(state.get("provider_because", ""))
    started = state.get("started_at")
    m.started_at = float(started) if isinstance(started, int | float) else None
    due = state.get("first_data_due_s")
    if isinstance(due, int | float):
        m.first_data_due_s = float(due)
    for v in state.get("series", []):
        ts = series_in(v) if version >= 2 else _series_in(v)
        m.series[ts.target] = ts
    for t, h in state.get("targets", []):
        m.targets[from_plain(ev.Target, t)] = _unhealth(h)
    for inst, levels in state.get("apf_dumps", []):
        m.apf_dumps[inst] = tuple(from_plain(ev.ApfLevelDump, x) for x in levels)
    for inst, h in state.get("apf_dump_health", []):
        m.apf_dump_health[inst] = _unhealth(h)
    for readings in state.get("apf_requests", []):
        for r in readings:
            m.apf_requests.read(from_plain(ev.ApfRequestsRead, r))
    for inst, why in state.get("apf_requests_errors", []):
        m.apf_requests.errors[str(inst)] = str(why)
    for feed, h in state.get("feeds", []):
        m.feeds[feed] = _unhealth(h)
    nodes = state.get("nodes", {})
    sampling = nodes.get("sampling")
    if sampling is not None:
        m.nodes.sampling = (int(sampling[0]), float(sampling[1]))
    counted = None
    if version >= 2:
        records, counted = nodes_in(nodes)
        m.nodes.leases = leases_in(nodes, records)
    else:
        records = keyframe_nodes(state)
        names, renews = nodes.get("leases", [[], []])
        # A Lease is keyed by its node's name object: renewals look up the same object.
        same = {r.name: r.name for r in records}
        m.nodes.leases = {same.get(n, n): float(r) for n, r in zip(names, renews, strict=True)}
    m.nodes.load(records, counted)
    pending = state.get("pending", {})
    for p in pending.get("pods", []):
        m.pending.upsert(from_plain(ev.PendingPodRecord, p))
    m.pending._quota = deque((float(a), int(c)) for a, c in pending.get("quota_rejections", []))
    for q in pending.get("quotas", []):
        m.pending.quota(from_plain(ev.QuotaRecord, q))
    m._seq = int(state.get("_seq", 0))
    cost = state.get("self_cost")
    m.self_cost = None if cost is None else from_plain(ev.SelfCost, cost)
    pace = state.get("pace")
    m.pace = None if pace is None else from_plain(ev.SimPace, pace)
    ids = state.get("identities")
    m.identities = None if ids is None else tuple(ids)
    m.metrics_only = str(state.get("metrics_only", ""))
    m.listing = {
        str(f): (int(n), None if of is None else int(of)) for f, n, of in state.get("listing", [])
    }
    m.readiness = {
        str(label): tuple((str(v), int(r), int(n)) for v, r, n in rows)
        for label, rows in state.get("readiness", [])
    }
    for inst, b in state.get("slo_budgets", []):
        m.slo_budgets[str(inst)] = from_plain(InstanceBudget, b)
    for d in state.get("slo_days", []):
        day = from_plain(ev.SloDayCounted, d)
        m.slo_days[day.instance] = day
    hist = state.get("history")
    if hist is not None:
        m.history = History.from_state(hist)
    return m
