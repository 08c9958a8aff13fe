"""Fixed facts the simulator imitates: bucket bounds, APF defaults, versions.

Bucket bounds and APF defaults are the upstream ones (see
``control-plane-signals.md``); nominal seat limits are computed as the
apiserver does for a server with 600 seats in total
(``ceil(600 * shares / sum(shares))``), which matches the real fixture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(start * factor**i for i in range(count))


WAIT_BUCKETS = (0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0)
"""``apiserver_flowcontrol_request_wait_duration_seconds``."""
REQUEST_BUCKETS = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0,
    3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
)  # fmt: skip
"""``apiserver_request_duration_seconds`` (23 bounds)."""
ETCD_DISK_BUCKETS = _exponential(0.001, 2, 14)
"""WAL fsync and backend commit: 1 ms .. 8.192 s."""
PEER_RTT_BUCKETS = _exponential(0.0001, 2, 16)
"""``etcd_network_peer_round_trip_time_seconds``: 0.1 ms .. 3.2768 s."""
SCHEDULING_BUCKETS = _exponential(0.001, 2, 15)
"""``scheduler_scheduling_attempt_duration_seconds``: 1 ms .. 16.384 s."""

K8S_VERSION = "v1.35.0"
K8S_VERSION_NEXT = "v1.35.1"
ETCD_VERSION = "3.6.6"
SERVER_SEATS = 600
"""``--max-requests-inflight`` 400 + ``--max-mutating-requests-inflight`` 200."""
APF_QUEUE_TIMEOUT_S = 15.0
"""A queued request gives up after a quarter of the 60 s request timeout."""


@dataclass(frozen=True, slots=True)
class LevelSpec:
    """A default PriorityLevelConfiguration."""

    name: str
    shares: int
    lendable_pct: int
    queues: int
    hand_size: int
    queue_length_limit: int
    exempt: bool = False
    reject: bool = False
    """``limitResponse: Reject`` (no queues: excess is rejected as concurrency-limit)."""


LEVELS: tuple[LevelSpec, ...] = (
    LevelSpec("exempt", 0, 0, 0, 0, 0, exempt=True),
    LevelSpec("system", 30, 33, 64, 6, 50),
    LevelSpec("node-high", 40, 25, 64, 6, 50),
    LevelSpec("leader-election", 10, 0, 16, 4, 50),
    LevelSpec("workload-high", 40, 50, 128, 6, 50),
    LevelSpec("workload-low", 100, 90, 128, 6, 50),
    LevelSpec("global-default", 20, 50, 128, 6, 50),
    LevelSpec("catch-all", 5, 0, 0, 0, 0, reject=True),
)
"""The default priority levels (mandatory and suggested)."""

_SUM_SHARES = sum(lv.shares for lv in LEVELS)
NOMINAL_SEATS: dict[str, int] = {
    lv.name: math.ceil(SERVER_SEATS * lv.shares / _SUM_SHARES) for lv in LEVELS
}
"""``apiserver_flowcontrol_nominal_limit_seats`` per level (600 seats in total)."""


@dataclass(frozen=True, slots=True)
class FlowSpec:
    """A default FlowSchema, the level it maps to and the traffic it carries.

    Rates are requests per second for the whole cluster: ``base + per_node *
    nodes``. ``verbs`` gives the share of each verb; reads take
    ``read_s`` seconds, writes ``write_s`` plus etcd's commit latency.
    """

    name: str
    level: str
    base: float
    per_node: float
    verbs: tuple[tuple[str, float], ...]
    seats: float = 1.0
    read_s: float = 0.006


FLOWS: tuple[FlowSpec, ...] = (
    FlowSpec("exempt", "exempt", 4.0, 0.0002, (("GET", 0.6), ("LIST", 0.1), ("PATCH", 0.3))),
    FlowSpec("probes", "exempt", 2.0, 0.0, (("GET", 1.0),)),
    FlowSpec("system-leader-election", "leader-election", 3.0, 0.0, (("GET", 0.3), ("PUT", 0.7))),
    FlowSpec("workload-leader-election", "leader-election", 1.0, 0.0, (("GET", 0.3), ("PUT", 0.7))),
    FlowSpec("endpoint-controller", "workload-high", 3.0, 0.0005, (("GET", 0.4), ("PUT", 0.6))),
    FlowSpec("system-node-high", "node-high", 0.0, 0.12, (("PUT", 0.83), ("PATCH", 0.17))),
    FlowSpec("system-nodes", "system", 1.0, 0.03, (("GET", 0.8), ("LIST", 0.05), ("WATCH", 0.15))),
    FlowSpec(
        "kube-controller-manager",
        "workload-high",
        15.0,
        0.004,
        (
            ("GET", 0.3),
            ("LIST", 0.02),
            ("POST", 0.2),
            ("PUT", 0.3),
            ("PATCH", 0.1),
            ("DELETE", 0.08),
        ),
        seats=1.2,
    ),
    FlowSpec(
        "kube-scheduler", "workload-high", 8.0, 0.0, (("GET", 0.3), ("POST", 0.5), ("PATCH", 0.2))
    ),
    FlowSpec(
        "kube-system-service-accounts",
        "workload-high",
        10.0,
        0.002,
        (("GET", 0.5), ("LIST", 0.05), ("WATCH", 0.05), ("PUT", 0.2), ("PATCH", 0.2)),
    ),
    FlowSpec(
        "service-accounts",
        "workload-low",
        20.0,
        0.008,
        (
            ("GET", 0.55),
            ("LIST", 0.05),
            ("WATCH", 0.05),
            ("POST", 0.1),
            ("PUT", 0.1),
            ("PATCH", 0.1),
            ("DELETE", 0.05),
        ),
        seats=1.3,
    ),
    FlowSpec(
        "global-default",
        "global-default",
        6.0,
        0.001,
        (("GET", 0.6), ("LIST", 0.05), ("POST", 0.15), ("PATCH", 0.15), ("DELETE", 0.05)),
    ),
    FlowSpec("catch-all", "catch-all", 0.2, 0.0, (("GET", 1.0),)),
)
"""The default flow schemas with synthetic traffic."""

STORM_FLOW = "service-accounts"
"""The flow the relist storm of ``apf-saturation`` comes through (level workload-low)."""
STORM_SEATS = 10.0
"""A cluster-scoped LIST of pods is charged the maximum width."""
STORM_SERVICE_S = 1.5
STORM_RATE = 150.0
"""Relist LIST requests per second over the whole cluster at the storm's peak."""
STORM_QUEUE_CAP = 600.0
"""Queue room the relisting clients reach: 2 flow distinguishers x hand of 6 x 50."""

READ_VERBS = frozenset({"GET", "LIST"})
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")
DURATION_VERBS = ("GET", "LIST", "POST", "PUT", "PATCH", "DELETE")
"""Verbs with a request-duration histogram (WATCH is long-running)."""
VERBS = ("GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE")

CODES: dict[str, tuple[tuple[str, float], ...]] = {
    "GET": (("200", 0.97), ("404", 0.03)),
    "LIST": (("200", 1.0),),
    "WATCH": (("200", 1.0),),
    "POST": (("201", 0.97), ("409", 0.02), ("422", 0.01)),
    "PUT": (("200", 0.995), ("409", 0.005)),
    "PATCH": (("200", 1.0),),
    "DELETE": (("200", 0.9), ("404", 0.1)),
}
"""Response code mix per verb (429s come from APF rejections, not from here)."""

WATCHES_PER_NODE: tuple[tuple[str, str, str, float], ...] = (
    ("", "pods", "cluster", 1.0),
    ("", "nodes", "resource", 1.0),
    ("", "configmaps", "resource", 2.5),
    ("", "secrets", "resource", 1.5),
    ("", "services", "cluster", 1.0),
    ("discovery.k8s.io", "endpointslices", "cluster", 1.0),
)
"""``(group, resource, scope, watches per node)`` held by kubelets and kube-proxies."""
CONTROLLER_WATCHES = 400.0
"""Watches from controllers, operators and the scheduler."""
