"""One simulated kube-apiserver: its traffic, latency, watches and process.

The cluster's traffic per flow schema is ``base + per_node x nodes`` (see
``catalog.FLOWS``); this instance gets ``weight`` of it (its share of client
connections). Requests go through :class:`Apf`; what is dispatched is
counted in ``apiserver_request_total`` by verb and code, what APF rejects
becomes ``code="429"`` (and a ``terminations`` entry). Write latency
includes etcd's commit latency; request durations include APF queueing.
A restart is a brand-new object: every counter starts again from 0.
"""

from __future__ import annotations

import random

from ktop.model.events import ApfLevelDump, ApfRequestsRead, Sample
from ktop.sources.sim.apf import Apf, StepResult
from ktop.sources.sim.catalog import (
    CODES,
    CONTROLLER_WATCHES,
    DURATION_VERBS,
    FLOWS,
    READ_VERBS,
    REQUEST_BUCKETS,
    STORM_FLOW,
    STORM_QUEUE_CAP,
    STORM_SEATS,
    STORM_SERVICE_S,
    VERBS,
    WATCHES_PER_NODE,
)
from ktop.sources.sim.metrics import Counters, Histogram, gauge, labels
from ktop.sources.sim.talkers import talkers

_SIGMA = {"GET": 0.6, "LIST": 0.9, "POST": 0.6, "PUT": 0.5, "PATCH": 0.6, "DELETE": 0.6}
SCOPE = {
    "GET": "resource",
    "LIST": "cluster",
    "POST": "namespace",
    "PUT": "resource",
    "PATCH": "resource",
    "DELETE": "resource",
}
"""The ``scope`` label of each verb's calls: informers list cluster-wide (the relist storm),
objects are read, changed and deleted by name and created in a namespace."""
_COMPONENT = "apiserver"
CONTROLLER_WATCHED = (
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("batch", "jobs"),
    ("", "persistentvolumeclaims"),
    ("", "namespaces"),
)
"""What controllers and operators watch (cluster-wide)."""


class Apiserver:
    """The state of one kube-apiserver process."""

    def __init__(
        self, rng: random.Random, instance: str, *, nodes: int, start_time: float, version: str
    ) -> None:
        self._rng = rng
        self.instance = instance
        self.nodes = nodes
        self.start_time = start_time
        self.version = version
        self.apf = Apf(rng)
        self.apf.flows[STORM_FLOW].queue_cap = STORM_QUEUE_CAP
        self.requests = Counters()
        self.terminations = Counters()
        self.durations = {v: Histogram(REQUEST_BUCKETS) for v in DURATION_VERBS}
        self.sli = {v: Histogram(REQUEST_BUCKETS) for v in DURATION_VERBS}
        """The same calls without their APF queue wait (``apiserver_request_sli_...``)."""
        self.cpu_s = 0.0
        self.rss = 3.0e8
        self.weight = 0.0
        self.storm_share = 0.0
        """The part of the storm flow's seat demand that is the relist storm's."""
        self.inflight = {"readOnly": 0.0, "mutating": 0.0}
        self.writes_per_s = 0.0
        self._list_s = 0.03 + nodes * 1.5e-5
        self._code_labels = {
            v: [
                (labels(code=c, component=_COMPONENT, subresource="", verb=v), share)
                for c, share in CODES[v]
            ]
            for v in VERBS
        }
        self._throttled = {
            v: labels(code="429", component=_COMPONENT, subresource="", verb=v) for v in VERBS
        }
        self._binding = labels(
            code="201", component=_COMPONENT, resource="pods", subresource="binding", verb="POST"
        )

    def step(self, dt: float, *, weight: float, storm: float, write_extra_s: float) -> None:
        """Advance ``dt`` seconds with this share of traffic and etcd's extra write latency."""
        self.weight = weight
        n = self.nodes
        noise = self._rng.random
        write_s = 0.008 + write_extra_s
        demand: dict[str, tuple[float, float, float]] = {}
        mixes: dict[str, dict[str, float]] = {}
        for fs in FLOWS:
            rate = (fs.base + fs.per_node * n) * weight * (0.95 + 0.1 * noise())
            mix = dict(fs.verbs)
            seats_sum = rate * fs.seats
            busy = 0.0
            for verb, share in fs.verbs:
                busy += rate * share * self._service(verb, fs.read_s, write_s) * fs.seats
            if fs.name == STORM_FLOW:
                self.storm_share = 0.0
            if fs.name == STORM_FLOW and storm > 0:
                extra = storm * weight
                storm_busy = extra * STORM_SEATS * STORM_SERVICE_S
                self.storm_share = storm_busy / (busy + storm_busy)
                busy += storm_busy
                seats_sum += extra * STORM_SEATS
                total = rate + extra
                mix = {v: s * rate / total for v, s in mix.items()}
                mix["LIST"] = mix.get("LIST", 0.0) + extra / total
                rate = total
            if rate <= 0:
                continue
            seats = seats_sum / rate
            demand[fs.name] = (rate, seats, busy / rate / seats)
            mixes[fs.name] = mix
        results = self.apf.step(dt, demand)
        self._account(dt, results, mixes, demand, write_s, storm > 0)

    def _service(self, verb: str, read_s: float, write_s: float) -> float:
        if verb == "LIST":
            return self._list_s
        if verb in READ_VERBS:
            return read_s
        if verb == "WATCH":
            return 0.005
        return write_s

    def _account(
        self,
        dt: float,
        results: dict[str, StepResult],
        mixes: dict[str, dict[str, float]],
        demand: dict[str, tuple[float, float, float]],
        write_s: float,
        storm: bool,
    ) -> None:
        done_by_verb = dict.fromkeys(VERBS, 0.0)
        queued_by_verb = dict.fromkeys(VERBS, 0.0)
        wait_by_verb = dict.fromkeys(VERBS, 0.0)
        inflight = {"readOnly": 0.0, "mutating": 0.0}
        for flow, res in results.items():
            mix = mixes.get(flow)
            if mix is None:
                continue
            executing = self.apf.flows[flow].executing
            for verb, share in mix.items():
                done_by_verb[verb] += res.dispatched * share
                queued_by_verb[verb] += res.from_queue * share
                wait_by_verb[verb] += res.from_queue * share * res.queued_wait_s
                kind = "readOnly" if verb in READ_VERBS or verb == "WATCH" else "mutating"
                inflight[kind] += executing * share
                if res.rejected > 0:
                    self.requests.add(self._throttled[verb], res.rejected * share)
            if res.rejected > 0:
                self.terminations.add(labels(code="429"), res.rejected)
        self.inflight = inflight
        for verb, done in done_by_verb.items():
            for lab, share in self._code_labels[verb]:
                self.requests.add(lab, done * share)
        writes = 0.0
        for verb, hist in self.durations.items():
            done = done_by_verb[verb]
            if verb in READ_VERBS:
                median = self._list_s * 2 if verb == "LIST" else 0.004
            else:
                median = write_s * 1.1
                writes += done
            if verb == "LIST" and storm:
                median = max(median, STORM_SERVICE_S * 0.8)
            queued = queued_by_verb[verb]
            hist.observe_lognormal(done - queued, median, _SIGMA[verb])
            self.sli[verb].observe_lognormal(done, median, _SIGMA[verb])
            if queued > 0:
                hist.observe_lognormal(queued, median + wait_by_verb[verb] / queued, 0.3)
        self.writes_per_s = writes / dt
        rps = sum(done_by_verb.values()) / dt
        cores = 0.3 + rps * 0.004 + self.watches() * 4e-5 + self.nodes * 5e-5
        self.cpu_s += cores * dt
        queued_total = sum(st.inqueue for st in self.apf.flows.values())
        target = 6e8 + self.nodes * 6e5 + self.watches() * 4e4 + queued_total * 2e6
        self.rss += (target - self.rss) * min(1.0, dt / 30.0)

    def watches(self) -> float:
        """Long-running WATCH requests held by this instance."""
        per_node = sum(w for *_, w in WATCHES_PER_NODE)
        return (per_node * self.nodes + CONTROLLER_WATCHES) * self.weight

    def bind(self, pods: float) -> None:
        """Count ``pods`` bindings the scheduler posted to this instance (201 Created)."""
        if pods > 0:
            self.requests.add(self._binding, pods)

    def request_dump(self, at: float) -> ApfRequestsRead:
        """What ``dump_requests?includeRequestDetails=1`` lists now, folded per client."""
        folded = talkers(self.apf, self.storm_share)
        count = sum(t.executing + t.waiting for t in folded)
        return ApfRequestsRead(at, self.instance, folded, count, executing_listed=True)

    def samples(self) -> tuple[list[Sample], tuple[ApfLevelDump, ...]]:
        """The ``/metrics`` samples and the APF dump, from the same state."""
        out: list[Sample] = []
        dump = self.apf.export(out)
        self.requests.export("apiserver_request_total", out)
        self.terminations.export("apiserver_request_terminations_total", out)
        for kind, v in self.inflight.items():
            gauge(out, "apiserver_current_inflight_requests", labels(request_kind=kind), round(v))
        for group, resource, scope, per_node in WATCHES_PER_NODE:
            count = round(per_node * self.nodes * self.weight)
            lab = labels(
                component=_COMPONENT, group=group, resource=resource, scope=scope,
                subresource="", verb="WATCH", version="v1",
            )  # fmt: skip
            gauge(out, "apiserver_longrunning_requests", lab, count)
        for group, resource in CONTROLLER_WATCHED:
            lab = labels(
                component=_COMPONENT, group=group, resource=resource, scope="cluster",
                subresource="", verb="WATCH", version="v1",
            )  # fmt: skip
            share = CONTROLLER_WATCHES / len(CONTROLLER_WATCHED)
            gauge(out, "apiserver_longrunning_requests", lab, round(share * self.weight))
        for verb, hist in self.durations.items():
            lab = labels(component=_COMPONENT, scope=SCOPE[verb], verb=verb)
            hist.export("apiserver_request_duration_seconds", lab, out)
            self.sli[verb].export("apiserver_request_sli_duration_seconds", lab, out)
        gauge(out, "process_cpu_seconds_total", (), round(self.cpu_s, 2))
        gauge(out, "process_resident_memory_bytes", (), round(self.rss / 4096) * 4096)
        gauge(out, "process_start_time_seconds", (), round(self.start_time, 2))
        build = labels(
            build_date="2026-01-13T17:12:03Z", compiler="gc",
            git_commit="66452049f3d692768c39c797b21b793dce80314e",
            git_tree_state="clean", git_version=self.version, go_version="go1.25.5",
            major="1", minor="35", platform="linux/amd64",
        )  # fmt: skip
        gauge(out, "kubernetes_build_info", build, 1)
        return out, dump
