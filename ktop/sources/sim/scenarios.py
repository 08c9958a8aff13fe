"""Every scenario ktop knows, as plain data: the one list of scenario names.

:data:`ALL` is the list: each scenario's name, summary, and where it can be made to
happen: the simulator (``ktop demo``, with its phases), the local lab
(``python -m ktop.lab inject``) and a kind cluster (``ktop demo --kind``). The
simulator's :data:`SCENARIOS`, the lab's :data:`LAB_SCENARIOS` and kind's
:data:`KIND_SCENARIOS` are derived from it; a unit test checks that every name used
anywhere else (command lines, docs, recordings, the Makefile) is in it.

A simulated scenario is a name, a one-line summary and a list of phases. Phase start
times are offsets in virtual seconds from the simulator's start; the
simulator derives its timings (when a zone fails, when etcd's disk slows,
when an apiserver restarts, ...) from these start times, so the text the
user reads and the behaviour stay in step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ktop.model.zones import DEFAULT_UNHEALTHY_ZONE_THRESHOLD
from ktop.sources.sim.lifecycle import EVICTION_QPS, GRACE_S, SECONDARY_QPS


@dataclass(frozen=True, slots=True)
class Phase:
    """One phase of a scenario."""

    name: str
    """Short identifier, e.g. ``grace-expires``."""
    starts_at_s: float
    """Offset from the simulator's start, in virtual seconds."""
    description: str
    """One or two sentences for the status line."""


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    """A demo scenario: a name, a one-line summary and its phases in order."""

    name: str
    summary: str
    phases: tuple[Phase, ...]
    duration_s: float
    """How long the story takes; after that the last phase simply continues."""

    def phase_at(self, offset_s: float) -> Phase:
        """The phase in force ``offset_s`` seconds after the start."""
        current = self.phases[0]
        for phase in self.phases:
            if phase.starts_at_s <= offset_s:
                current = phase
            else:
                break
        return current

    def start_of(self, name: str) -> float:
        """The start offset of the phase called ``name`` (KeyError if absent)."""
        for phase in self.phases:
            if phase.name == name:
                return phase.starts_at_s
        raise KeyError(f"scenario {self.name!r} has no phase {name!r}")


def _spec(
    name: str, summary: str, duration_s: float, *phases: tuple[float, str, str]
) -> ScenarioSpec:
    return ScenarioSpec(
        name=name,
        summary=summary,
        phases=tuple(Phase(n, float(t), d) for t, n, d in phases),
        duration_s=duration_s,
    )


_STEADY = _spec(
    "steady",
    "A healthy cluster with ordinary noise: leases renew, pods schedule within a second.",
    300,
    (0, "healthy", "Every node renews its Lease every ~10 s; the scheduler keeps up."),
    (
        60,
        "one-node-flaps",
        "One kubelet reports Ready=False (PLEG not healthy) for about a minute.",
    ),
    (130, "healthy-again", "The node is Ready again; everything is quiet."),
)

_ZONE_OUTAGE = _spec(
    "zone-outage",
    "One zone loses power rack by rack; its nodes go Ready=Unknown and tainting slows down.",
    300,
    (0, "healthy", "All zones Normal."),
    (
        30,
        "outage-wave",
        "Racks in one zone stop renewing their Leases, one rack after another over ~60 s.",
    ),
    (
        75,
        "grace-expires",
        f"The first nodes pass the {GRACE_S:g} s node-monitor grace period and become "
        f"Ready=Unknown; the zone is still Normal, so tainting runs at {EVICTION_QPS:g} node/s.",
    ),
    (
        110,
        "partial-disruption",
        f"More than {DEFAULT_UNHEALTHY_ZONE_THRESHOLD:.0%} of the zone is unhealthy: "
        f"PartialDisruption, tainting slows to the secondary rate of {SECONDARY_QPS:g} node/s.",
    ),
    (
        145,
        "full-disruption",
        "No node in the zone is Ready: FullDisruption. Other zones are healthy, so the "
        "zone is tainted at the normal rate again.",
    ),
)

_ETCD_SLOW_DISK = _spec(
    "etcd-slow-disk",
    "The etcd leader's disk slows down; fsync p99 passes 500 ms, then leadership moves.",
    300,
    (0, "healthy", "WAL fsync p99 about 2 ms on every member."),
    (30, "leader-disk-slows", "WAL fsync on the leader climbs from ~2 ms toward >500 ms p99."),
    (90, "all-members-slow", "Followers' disks degrade too; backend commit latency follows fsync."),
    (
        150,
        "leader-change",
        "The leader misses heartbeats: a new leader is elected and in-flight proposals fail.",
    ),
    (
        160,
        "degraded",
        "A new leader serves writes, still on slow disks; apiserver writes stay slow.",
    ),
)

_APF_SATURATION = _spec(
    "apf-saturation",
    "An apiserver restarts and a relist storm saturates the workload-low priority level.",
    300,
    (0, "healthy", "All priority levels have headroom."),
    (
        30,
        "apiserver-restart",
        "One apiserver restarts: scrapes fail, then its counters start again from 0.",
    ),
    (
        60,
        "relist-storm",
        "Informers relist: LIST requests from service accounts pile into workload-low; "
        "requests queue and wait times grow.",
    ),
    (
        100,
        "rejections",
        "workload-low's queues are full: requests are rejected (queue-full) or time out "
        "in the queue (time-out) and clients get 429s.",
    ),
    (220, "storm-subsides", "The relists finish; the queues drain."),
)

_APISERVER_SKEW = _spec(
    "apiserver-skew",
    "A rolling restart of the apiservers leaves one holding most watches and one nearly idle.",
    300,
    (0, "balanced", "Watches and requests spread evenly over the apiservers."),
    (
        30,
        "rolling-restart",
        "The apiservers restart one after another (~60 s apart); their clients "
        "reconnect to the others.",
    ),
    (
        210,
        "skewed",
        "The restart is over: the first instance holds most watches and requests, the last "
        "one restarted sits nearly idle.",
    ),
)

_SCHEDULER_BACKLOG = _spec(
    "scheduler-backlog",
    "GPU training pods pile up unschedulable; gated pods wait for admission; quota blocks more.",
    300,
    (0, "healthy", "Pods are scheduled within a second."),
    (
        20,
        "gpu-job-submitted",
        "ml-train/trainer pods arrive asking for 8 GPUs each; no node has free GPUs.",
    ),
    (
        45,
        "gated-pods",
        "ml-queue/eval pods are created with scheduling gates (waiting for admission).",
    ),
    (
        80,
        "quota-exceeded",
        "The trainer Job hits its GPU quota: FailedCreate events, pods never created.",
    ),
    (120, "backlog", "Unschedulable pods are retried periodically; the backlog does not drain."),
)


@dataclass(frozen=True, slots=True)
class Scenario:
    """One incident ktop can show, and where ktop can make it happen."""

    name: str
    summary: str
    sim: ScenarioSpec | None
    """The simulator's story of it (``ktop demo``); None when only a real cluster shows it."""
    lab: bool = False
    """``python -m ktop.lab inject`` makes it happen on the local control plane."""
    kind_order: int | None = None
    """Its place in a ``ktop demo --kind`` run; None when kind cannot make it happen. The
    first is that demo's default scenario; the zone outage, which stops a worker
    container, comes last."""
    counterpart: str | None = None
    """The scenario that shows the nearest incident where this one cannot be made to
    happen (the lab cannot slow a disk; the simulator does not kill a process)."""
    cause: str | None = None
    """The triage path (``ktop/analysis/triage/paths.py``) that names the injected cause:
    what ``ktop triage`` must rank first once the story has unfolded; None: no incident
    (a healthy cluster, exit 0)."""


def _simulated(
    spec: ScenarioSpec, cause: str | None, *, lab: bool = False, kind_order: int | None = None
) -> Scenario:
    return Scenario(spec.name, spec.summary, spec, lab=lab, kind_order=kind_order, cause=cause)


ALL: tuple[Scenario, ...] = (
    _simulated(_STEADY, None),
    _simulated(_ZONE_OUTAGE, "P4", lab=True, kind_order=3),
    _simulated(_ETCD_SLOW_DISK, "ETCD"),
    _simulated(_APF_SATURATION, "API-RELIST", lab=True, kind_order=2),
    _simulated(_APISERVER_SKEW, "SKEW", lab=True),
    _simulated(_SCHEDULER_BACKLOG, "P2", lab=True, kind_order=1),
    Scenario(
        "etcd-leader-loss",
        "The etcd leader is killed; the other members elect a new one (needs 3 members).",
        None,
        lab=True,
        counterpart=_ETCD_SLOW_DISK.name,
        cause="ETCD",
    ),
)
"""Every scenario, in menu order: the one list of scenario names, each with the triage
path that names its injected cause (``cause``)."""

BY_NAME: Mapping[str, Scenario] = MappingProxyType({s.name: s for s in ALL})
""":data:`ALL` by name."""

SCENARIOS: Mapping[str, ScenarioSpec] = MappingProxyType(
    {s.name: s.sim for s in ALL if s.sim is not None}
)
"""The scenarios the simulator plays (``ktop demo``), by name, in menu order."""

LAB_SCENARIOS: tuple[str, ...] = tuple(s.name for s in ALL if s.lab)
"""The scenarios ``python -m ktop.lab inject`` makes happen, in menu order."""

KIND_SCENARIOS: tuple[str, ...] = tuple(
    s.name for s in sorted(ALL, key=lambda s: s.kind_order or 0) if s.kind_order is not None
)
"""The scenarios a kind cluster can show, in the order ``ktop demo --kind`` runs them."""
