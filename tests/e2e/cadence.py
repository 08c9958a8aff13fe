"""How often each thing the e2e tests wait for happens, and every deadline derived from it.

Every wait in tests/e2e polls its condition until a deadline built here, never a bare
number of seconds::

    deadline(cycles(n, PERIOD_S), ..., BOUND_S, steps(k))
        = n x PERIOD_S x BUSY_FACTOR + ... + BOUND_S + k x STEP_S + MARGIN_S

* a *period* is the cadence of what is waited for: the lab Prometheus' scrape interval,
  ktop's scrape and poll intervals, the node lifecycle controller's monitor period, the
  KWOK Lease renewal, the quota controller's resync. ``n`` is the number of cycles the
  condition needs, written down at each deadline (two scrapes for a rate, and one more
  because the first may start a whole period late);
* a *bound* is a time limit that is already a worst case: ktop's own (the Prometheus
  backfill's limit, a request's time limit) or the cluster's (the node monitor grace
  period, the lab's own start-up limit);
* a *step* is one event-driven hop with no period of its own: a request answered, a watch
  event delivered, one pass of a controller's work queue;
* ``BUSY_FACTOR`` stretches every cycle and ``MARGIN_S`` is added once per wait, so that
  the suite holds with one busy process per core beside it (``KTOP_E2E_BUSY``).

Periods that ktop sets are imported from ktop (or set here, once, where the tests choose
them); the lab's are read from the running lab (its Prometheus configuration, its
components' recorded command lines, its LabConfig); Kubernetes defaults that the lab
leaves alone are named here with their flag.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ktop.cli import DEFAULTS
from ktop.lab import Lab, procs
from ktop.lab.scenario_skew import READY_LIMIT_S
from ktop.lab.scenarios_api import apf_saturation
from ktop.lab.scenarios_proc import etcd_leader_loss
from ktop.sources.live.client import PROBE_TIMEOUT_S
from ktop.sources.live.leases import LeaseSampler
from ktop.sources.live.listwatch import Backoff
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus_calls import PrometheusCalls
from ktop.sources.live.timing import BACKFILL_TIMEOUT_S, FIRST_POLL_WAIT_S
from ktop.sources.live.transport import REQUEST_TIMEOUT_S

# -- how much a busy machine stretches a wait ------------------------------------------

BUSY_FACTOR = 3.0
"""Each cycle of a periodic loop counts three times: on a busy machine a cycle is its
period plus its own work (a scrape parsed, a poll's queries answered) done with a small
part of a core, and a timer fires late."""
MARGIN_S = 45.0
"""Added once to every deadline: the fixed costs around a wait on a busy machine (the
first request's TLS handshake, a LIST of every node, the test's own reads of the truth)."""
STEP_S = 15.0
"""One event-driven hop with no period (a request answered, a watch event delivered, a
pass of a controller's work queue) on a busy machine."""
PROCESS_START_S = 30.0
"""A Python process (ktop's CLI, the lab's injector) started and its imports done, on a
busy machine."""
POLL_EVERY_S = 1.0
"""How often a wait reads the cluster or Prometheus to look at its condition (not a
deadline)."""
SNAPSHOT_EVERY_S = 0.5
"""How often a wait looks at an in-process ktop snapshot or screen (not a deadline)."""


def cycles(n: float, period_s: float) -> float:
    """``n`` cycles of a loop that runs every ``period_s``, stretched as a busy machine
    stretches them."""
    return n * period_s * BUSY_FACTOR


def steps(n: int) -> float:
    """``n`` event-driven hops."""
    return n * STEP_S


def deadline(*parts: float) -> float:
    """A wait's deadline: its cycles, bounds and steps, plus the margin."""
    return sum(parts) + MARGIN_S


# -- ktop's cadences as the e2e tests run it -------------------------------------------

KTOP_SCRAPE_S = 2.0
"""The tests' apiserver, APF dump and component scrape interval (``live.options``)."""
KTOP_DISCOVERY_S = 10.0
"""The tests' apiserver discovery interval."""
KTOP_PROMETHEUS_S = 2.0
"""The tests' Prometheus poll interval (and the fleet cells' ``--scrape-interval``)."""
KTOP_NODE_DETAIL_PER_S = 20.0
"""The tests' rate of whole-Node reads for not-Ready nodes."""
KTOP_WATCH_TIMEOUT_S = 60
"""The tests' watch timeout (each watch is renewed this often)."""
KTOP_REFRESH_S = 0.5
"""The tests' screen refresh interval for ktop's UI."""
DEFAULT_SCRAPE_S = float(DEFAULTS["scrape_interval"])
"""ktop's own default interval (``--scrape-interval``): scrapes, APF dumps, Prometheus."""
LEASE_ROUND_S = LiveOptions().lease_round_s
"""ktop samples node Leases in rounds this often."""
LEASES_BY_NAME_PER_ROUND: int = (
    inspect.signature(LeaseSampler).parameters["by_name_per_round"].default
)
"""Leases of not-Ready nodes read again by name per round."""
PROMETHEUS_CALL_LIMIT_S: float = inspect.signature(PrometheusCalls).parameters["timeout_s"].default
"""ktop abandons one Prometheus poll (all of its queries) after this long."""
REQUEST_LIMIT_S = REQUEST_TIMEOUT_S
"""ktop's time limit for one request to an apiserver."""
PROBE_LIMIT_S = PROBE_TIMEOUT_S
"""ktop's time limit for its first request to a cluster."""
RELIST_BACKOFF_S = Backoff().base_s
"""ktop's first back-off before it lists again after a watch failed (410 Gone)."""


def prometheus_cycle_s(interval_s: float) -> float:
    """One cycle of ktop's Prometheus poll at its worst: the interval, then a poll that
    takes up to its time limit (dozens of queries to a Prometheus on a busy machine)."""
    return interval_s + PROMETHEUS_CALL_LIMIT_S


def prometheus_first_s(interval_s: float = KTOP_PROMETHEUS_S, polls: int = 2) -> float:
    """Until ktop's first readings through Prometheus: the backfill of the last hour
    (bounded by ktop's own limit), the wait for the first poll that the apiserver
    discovery allows, and ``polls`` polls (a rate needs two; the first follows the
    backfill at once)."""
    polled = cycles(polls, prometheus_cycle_s(interval_s))
    return BACKFILL_TIMEOUT_S + FIRST_POLL_WAIT_S + polled


def ktop_rates_s(scrape_s: float = KTOP_SCRAPE_S) -> float:
    """Until a rate read by direct scrapes is known: two scrapes, and one more period
    because the first may come a whole period late."""
    return cycles(3, scrape_s)


# -- the flood of the apf-saturation scenario ------------------------------------------

APF_FLOOD_S: float = inspect.signature(apf_saturation).parameters["max_seconds"].default
"""The longest the apf-saturation scenario floods."""
ETCD_ELECTION_LIMIT_S: float = inspect.signature(etcd_leader_loss).parameters["timeout_s"].default
"""The etcd-leader-loss scenario waits this long at most for the survivors' new leader."""
APISERVER_READY_LIMIT_S = READY_LIMIT_S
"""The apiserver-skew scenario waits this long at most for the restarted apiserver's
``/readyz``."""


# -- the lab's cadences ----------------------------------------------------------------

COMPONENT_STOP_S: float = inspect.signature(procs.stop).parameters["timeout_s"].default
"""The lab gives a component this long after SIGTERM before it sends SIGKILL."""
SUPERVISOR_WAIT_S = 60.0
"""``python -m ktop.lab down`` waits this long for a foreground ``up`` to stop its own lab
before it stops what is left itself (a literal in ktop/lab/__main__.py)."""


def lab_stop_s(components: int) -> float:
    """A lab of ``components`` processes stopped one after the other, each at its worst."""
    return components * COMPONENT_STOP_S


QUOTA_SYNC_DEFAULT_S = 300.0
"""kube-controller-manager's ``--resource-quota-sync-period`` default (5m0s): every
quota's usage is recounted this often even when a replenishment event was missed."""
COUNT_POLL_DEFAULT_S = 60.0
"""kube-apiserver's ``--etcd-count-metric-poll-period`` default (1m0s): how often it
counts and sizes each resource's objects (``apiserver_resource_size_estimate_bytes``)."""
COUNT_POLL_JITTER = 1.2
"""The apiserver waits up to this fraction of the period more between two counts."""

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")


def _seconds(text: str) -> float:
    """A Go or Prometheus duration of minutes and seconds (``1s``, ``2m0s``) in seconds."""
    m = _DURATION.match(text.strip())
    if not m or not any(m.groups()):
        raise ValueError(f"not a duration of minutes and seconds: {text!r}")
    return float(m.group(1) or 0) * 60 + float(m.group(2) or 0)


def _flag(lab: Lab, component: str, flag: str) -> str | None:
    """The value of ``--flag=value`` in the component's recorded command line."""
    for arg in procs.component(lab.dir, component)["argv"]:
        if arg.startswith(f"{flag}="):
            return str(arg.split("=", 1)[1])
    return None


@dataclass(frozen=True)
class LabCadence:
    """The periods and bounds of one running lab; each property is how long until
    something happens in the cluster at its worst (readers' cycles come on top)."""

    scrape_s: float
    """The lab Prometheus' ``scrape_interval`` (each scrape is also bounded by it)."""
    node_monitor_period_s: float
    """The node lifecycle controller's ``--node-monitor-period``."""
    node_grace_s: float
    """``--node-monitor-grace-period``: a node whose Lease is older is Unknown."""
    lease_s: float
    """The node Lease duration KWOK writes."""
    eviction_rate: float
    """NoExecute taints per second in a fully disrupted zone."""
    nodes_per_zone: int
    quota_sync_s: float
    """The quota controller's full resync period."""
    count_poll_s: float
    """The apiservers' object count and size poll period."""
    start_s: float
    """The lab's own limit for starting its components and bringing every node Ready."""

    @property
    def renew_s(self) -> float:
        """KWOK renews each Lease a quarter of its duration after the last renewal (as
        the kubelet does)."""
        return self.lease_s / 4

    @property
    def in_prometheus_s(self) -> float:
        """A change in a component is in the lab's own Prometheus."""
        return in_prometheus_s(self.scrape_s)

    @property
    def zone_down_s(self) -> float:
        """A zone whose KWOK was killed is Unknown and tainted: the last renewal may have
        just happened, then the grace period, a monitor period, the status writes and
        NoSchedule taints, and one NoExecute taint per node at the eviction rate."""
        taints = cycles(self.nodes_per_zone, 1 / self.eviction_rate)
        monitor = cycles(1, self.node_monitor_period_s)
        # steps: the zone's Ready=Unknown status writes and NoSchedule taints, each one
        # pass of the controller over the zone's nodes
        return self.renew_s + self.node_grace_s + monitor + taints + steps(2)

    @property
    def zone_back_s(self) -> float:
        """A zone whose KWOK was started again is Ready and untainted: KWOK initialises its
        nodes as at the lab's start (bounded by the lab's start limit), renews their
        Leases, and the controller lifts the taints at its next monitor period."""
        return self.start_s + self.renew_s + cycles(1, self.node_monitor_period_s)

    @property
    def size_estimate_s(self) -> float:
        """Every apiserver has sized a resource: its first count runs at its start, before
        it has seen an object (0), the next one a period and its jitter later."""
        return self.count_poll_s * (1 + COUNT_POLL_JITTER)

    @property
    def component_restart_s(self) -> float:
        """A restarted component (an apiserver, Prometheus) is ready again: as at the
        lab's start, bounded by its start limit."""
        return self.start_s


def scrape_interval_s(prometheus_config: Path) -> float:
    """The global ``scrape_interval`` of a Prometheus configuration the lab wrote (JSON)."""
    config = json.loads(prometheus_config.read_text(encoding="utf-8"))
    return _seconds(str(config["global"]["scrape_interval"]))


def in_prometheus_s(scrape_s: float) -> float:
    """A change in a component is in a Prometheus that scrapes every ``scrape_s``: the next
    scrape, and one more because a scrape of a busy component can miss its time limit."""
    return cycles(2, scrape_s)


def lab_cadence(lab: Lab) -> LabCadence:
    """The cadences of a running lab, read from its Prometheus configuration, its
    controller-manager's command line and its LabConfig."""
    scrape = scrape_interval_s(lab.layout.prometheus_config) if lab.cfg.prometheus else 0.0
    cm = "kube-controller-manager"
    period = _flag(lab, cm, "--node-monitor-period")
    grace = _flag(lab, cm, "--node-monitor-grace-period")
    rate = _flag(lab, cm, "--node-eviction-rate")
    quota = _flag(lab, cm, "--resource-quota-sync-period")
    count = _flag(lab, "apiserver-a", "--etcd-count-metric-poll-period")
    assert period and grace and rate, "the lab's controller-manager flags changed"
    return LabCadence(
        scrape_s=scrape,
        node_monitor_period_s=_seconds(period),
        node_grace_s=_seconds(grace),
        lease_s=float(lab.cfg.node_lease_duration_s),
        eviction_rate=float(rate),
        nodes_per_zone=math.ceil(lab.cfg.nodes / len(lab.cfg.zones)),
        quota_sync_s=_seconds(quota) if quota else QUOTA_SYNC_DEFAULT_S,
        count_poll_s=_seconds(count) if count else COUNT_POLL_DEFAULT_S,
        start_s=lab.cfg.start_timeout_s,
    )
