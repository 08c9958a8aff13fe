"""The simulated cluster: determinism, cadences, metric hygiene and each scenario's story.

Every check reads the emitted events only (what the model will see), never
the simulator's internals.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import cache

import pytest

from ktop.model.events import (
    FEED_EVENTS,
    FEED_IDENTITIES,
    FEED_LEASES,
    FEED_NODES,
    FEED_PENDING_PODS,
    FEED_QUOTAS,
    ApfDumpRead,
    ApiserverIdentities,
    ClockTick,
    Component,
    Event,
    FeedSynced,
    LeaseRenewed,
    MetricsScraped,
    NodeRecord,
    NodeUpserted,
    PendingPodDeleted,
    PendingPodUpserted,
    PodWait,
    Readiness,
    Sample,
    ScrapeFailed,
    SourceStarted,
    WarningEvent,
)
from ktop.model.wanted import COUNTERS, FAMILIES, HISTOGRAMS
from ktop.model.zones import DEFAULT_UNHEALTHY_ZONE_THRESHOLD
from ktop.sources.sim import SCENARIOS, Simulator, SimulatorSource

NODES = 450
ZONES = 3


@cache
def run(scenario: str, seconds: int = 300, seed: int = 1, nodes: int = NODES) -> tuple[Event, ...]:
    """start() plus ``seconds`` of 1 s advances, cached across tests."""
    sim = Simulator(scenario, nodes=nodes, zones=ZONES, seed=seed)
    events: list[Event] = list(sim.start())
    for _ in range(seconds):
        events.extend(sim.advance(1.0))
    return tuple(events)


def scrapes(events: Iterable[Event], instance_prefix: str = "") -> list[MetricsScraped]:
    return [
        e
        for e in events
        if isinstance(e, MetricsScraped) and e.target.instance.startswith(instance_prefix)
    ]


def value(samples: Sequence[Sample], name: str, **match: str) -> float:
    """Sum of the samples of ``name`` whose labels include ``match``."""
    total = 0.0
    for s in samples:
        if s.name == name:
            labels = dict(s.labels)
            if all(labels.get(k) == v for k, v in match.items()):
                total += s.value
    return total


def quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float:
    """histogram_quantile over (le, cumulative count) pairs."""
    buckets = sorted(buckets)
    total = buckets[-1][1]
    assert total > 0
    rank = q * total
    prev_b, prev_c = 0.0, 0.0
    for b, c in buckets:
        if c >= rank:
            if math.isinf(b):
                return prev_b
            return prev_b + (b - prev_b) * (rank - prev_c) / max(c - prev_c, 1e-9)
        prev_b, prev_c = b, c
    return prev_b


def buckets(samples: Sequence[Sample], family: str, **match: str) -> dict[float, float]:
    out: dict[float, float] = defaultdict(float)
    for s in samples:
        if s.name == family + "_bucket":
            labels = dict(s.labels)
            if all(labels.get(k) == v for k, v in match.items()):
                out[float(labels["le"])] += s.value
    return out


def window_quantile(
    old: Sequence[Sample], new: Sequence[Sample], q: float, family: str, **match: str
) -> float:
    a, b = buckets(old, family, **match), buckets(new, family, **match)
    return quantile(q, [(le, b[le] - a.get(le, 0.0)) for le in b])


def latest_nodes(events: Iterable[Event]) -> dict[str, NodeRecord]:
    nodes: dict[str, NodeRecord] = {}
    for e in events:
        if isinstance(e, NodeUpserted):
            nodes[e.node.name] = e.node
    return nodes


def offset(e: Event) -> float:
    return e.at - 1_767_225_600.0


# --------------------------------------------------------------------------
# API, determinism, ordering, cadence


def test_scenarios_are_ordered_and_well_formed() -> None:
    assert list(SCENARIOS) == [
        "steady",
        "zone-outage",
        "etcd-slow-disk",
        "apf-saturation",
        "apiserver-skew",
        "scheduler-backlog",
    ]
    for spec in SCENARIOS.values():
        starts = [p.starts_at_s for p in spec.phases]
        assert starts[0] == 0 and starts == sorted(starts)
        assert spec.summary and all(p.description for p in spec.phases)
        assert 180 <= spec.duration_s <= 360


def test_unknown_scenario_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown scenario"):
        Simulator("no-such-thing")


def test_same_seed_same_events_and_other_seed_differs() -> None:
    a = run("apf-saturation", 90, seed=7)
    b = run.__wrapped__("apf-saturation", 90, seed=7)
    c = run("apf-saturation", 90, seed=8)
    assert a == b
    assert a != c


def test_start_lists_everything_once() -> None:
    sim = Simulator("steady", nodes=NODES, apiservers=3, etcd_members=3)
    events = sim.start()
    first = events[0]
    assert isinstance(first, SourceStarted)
    assert (first.kind, first.context) == ("demo", "sim/steady")
    assert sum(isinstance(e, NodeUpserted) for e in events) == NODES
    leases = [e for e in events if isinstance(e, LeaseRenewed)]
    assert len(leases) == NODES
    assert all(sim.now - 10.5 <= e.renew_time <= sim.now for e in leases)
    feeds = {e.feed for e in events if isinstance(e, FeedSynced)}
    assert feeds == {
        FEED_NODES,
        FEED_LEASES,
        FEED_PENDING_PODS,
        FEED_EVENTS,
        FEED_QUOTAS,
        FEED_IDENTITIES,
    }
    identities = [e for e in events if isinstance(e, ApiserverIdentities)]
    assert len(identities) == 1 and len(identities[0].identities) == 3
    targets = [e.target for e in events if isinstance(e, MetricsScraped)]
    assert len(targets) == len(set(targets)) == 3 + 3 + 2
    assert {t.component for t in targets} == set(Component)
    dumps = [e.instance for e in events if isinstance(e, ApfDumpRead)]
    apiservers = [t.instance for t in targets if t.component is Component.APISERVER]
    assert dumps == apiservers


def test_events_come_in_time_order_within_each_advance() -> None:
    sim = Simulator("zone-outage", nodes=NODES)
    sim.start()
    before = sim.now
    for _ in range(20):
        batch = sim.advance(7.5)
        times = [e.at for e in batch]
        assert times == sorted(times)
        assert all(before < t <= sim.now for t in times)
        assert isinstance(batch[-1], ClockTick) and batch[-1].at == sim.now
        before = sim.now
    assert sim.now == 1_767_225_600.0 + 150
    assert sim.phase().name == "full-disruption"


def test_every_target_is_scraped_again_within_three_seconds_then_every_five() -> None:
    events = run("steady", 60)
    by_target: dict[str, list[float]] = defaultdict(list)
    for e in scrapes(events):
        by_target[e.target.instance].append(offset(e))
    for times in by_target.values():
        assert times[0] == 0.0
        assert 0 < times[1] <= 3.0
        gaps = {round(b - a, 6) for a, b in itertools.pairwise(times[1:])}
        assert gaps == {5.0}


def test_leases_renew_every_ten_seconds_with_up_to_four_percent_jitter() -> None:
    events = run("steady", 120)
    renewals: dict[str, list[float]] = defaultdict(list)
    for e in events:
        if isinstance(e, LeaseRenewed) and offset(e) > 0:
            assert e.at == e.renew_time
            renewals[e.node].append(e.renew_time)
    assert len(renewals) == NODES
    gaps = [b - a for times in renewals.values() for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 10.0 - 1e-6
    assert max(gaps) <= 10.4 + 1e-6


# --------------------------------------------------------------------------
# metric hygiene


def _series_key(s: Sample) -> tuple[str, tuple[tuple[str, str], ...]]:
    return s.name, s.labels


def _family(name: str) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name[: -len(suffix)] in HISTOGRAMS:
            return name[: -len(suffix)]
    return name


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_only_wanted_families_with_their_labels(scenario: str) -> None:
    for e in scrapes(run(scenario))[::3]:
        wanted = FAMILIES[e.target.component]
        seen = set()
        for s in e.samples:
            family = _family(s.name)
            assert family in wanted, (e.target.instance, s.name)
            kept = wanted[family]
            names = [k for k, _ in s.labels]
            assert names == sorted(names)
            if kept is not None:
                assert set(kept) <= set(names), (s.name, s.labels)
            assert math.isfinite(s.value) and s.value >= 0
            seen.add(family)
        assert "process_start_time_seconds" in seen


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_histograms_are_cumulative(scenario: str) -> None:
    for e in scrapes(run(scenario))[::7]:
        groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, float]]] = (
            defaultdict(list)
        )
        counts: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for s in e.samples:
            if s.name.endswith("_bucket"):
                labels = tuple(kv for kv in s.labels if kv[0] != "le")
                groups[(s.name[:-7], labels)].append((float(dict(s.labels)["le"]), s.value))
            elif s.name.endswith("_count") and _family(s.name) in HISTOGRAMS:
                counts[(s.name[:-6], s.labels)] = s.value
        assert groups or e.target.component is Component.CONTROLLER_MANAGER
        for key, pairs in groups.items():
            pairs.sort()
            values = [v for _, v in pairs]
            assert values == sorted(values), key
            assert math.isinf(pairs[-1][0]) and pairs[-1][1] == counts[key]


RESTARTING = {"apf-saturation", "apiserver-skew"}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_counters_never_decrease_except_across_a_restart(scenario: str) -> None:
    last: dict[tuple[str, str, tuple[tuple[str, str], ...]], float] = {}
    started: dict[str, float] = {}
    resets: set[str] = set()
    for e in scrapes(run(scenario)):
        inst = e.target.instance
        start = value(e.samples, "process_start_time_seconds")
        restarted = inst in started and start != started[inst]
        if restarted:
            assert start > started[inst]
            resets.add(inst)
        started[inst] = start
        for s in e.samples:
            family = _family(s.name)
            if family not in COUNTERS and family not in HISTOGRAMS:
                continue
            key = (inst, s.name, s.labels)
            if key in last and s.value < last[key]:
                assert restarted, (scenario, key, last[key], s.value)
            last[key] = s.value
    if scenario in RESTARTING:
        assert resets
    else:
        assert not resets


# --------------------------------------------------------------------------
# scenarios


def test_steady_keeps_nodes_ready_and_pods_moving() -> None:
    events = run("steady")
    nodes = latest_nodes(events)
    assert all(n.ready is Readiness.TRUE for n in nodes.values())
    flaps = [e for e in events if isinstance(e, NodeUpserted) and e.node.ready is Readiness.FALSE]
    assert len({e.node.name for e in flaps}) == 1
    created: dict[str, float] = {}
    waited = []
    for e in events:
        if isinstance(e, PendingPodUpserted):
            pod = e.pod
            if pod.wait is PodWait.NOT_ATTEMPTED:
                created[pod.name] = e.at
            elif pod.wait is PodWait.BOUND_NOT_STARTED:
                assert pod.node in nodes
                waited.append(e.at - created.pop(pod.name))
    assert len(waited) > 100
    assert all(1.0 <= w <= 1.3 for w in waited)
    for e in scrapes(events, "kube-scheduler")[-3:]:
        assert value(e.samples, "scheduler_pending_pods", queue="unschedulable") == 1
        assert value(e.samples, "scheduler_pending_pods", queue="gated") == 0


def test_zone_outage_takes_one_zone_down_through_partial_then_full_disruption() -> None:
    events = run("zone-outage")
    nodes = latest_nodes(events)
    by_zone: dict[str, list[NodeRecord]] = defaultdict(list)
    for n in nodes.values():
        by_zone[n.zone].append(n)
    assert len(by_zone) == ZONES
    down = "us-east-1b"
    assert all(n.ready is Readiness.UNKNOWN for n in by_zone[down])
    for zone, members in by_zone.items():
        if zone != down:
            assert all(n.ready is Readiness.TRUE and not n.unreachable_taint for n in members)
    # nodes went Unknown in a wave (rack by rack over about a minute), after the 50 s grace
    went = sorted(
        offset(e)
        for e in events
        if isinstance(e, NodeUpserted) and e.node.ready is Readiness.UNKNOWN
        if not e.node.unreachable_taint
    )
    assert 70 <= went[0] <= 95 and 130 <= went[-1] <= 160
    # node_collector metrics pass through Normal -> Partial -> Full (health 100 -> <45 -> 0)
    key = f"us-east-1:\x00:{down}"
    health = [
        value(e.samples, "node_collector_zone_health", zone=key)
        for e in scrapes(events, "kube-con")
    ]
    assert health[0] == 100.0 and health[-1] == 0.0
    assert any(0 < h < 45 for h in health)
    last = scrapes(events, "kube-con")[-1].samples
    assert value(last, "node_collector_unhealthy_nodes_in_zone", zone=key) == len(by_zone[down])
    assert value(last, "node_collector_zone_size", zone=key) == len(by_zone[down])
    tainted = sum(n.unreachable_taint for n in by_zone[down])
    assert value(last, "node_collector_evictions_total", zone=key) == tainted
    assert value(last, "node_collector_evictions_total") == tainted
    # taints are rate limited: 0.1/s while Normal or Full, 0.01/s while PartialDisruption
    _check_taint_rates(events, down)


def _check_taint_rates(events: Sequence[Event], zone: str) -> None:
    records: dict[str, NodeRecord] = {}
    taint_times: dict[str, list[float]] = defaultdict(list)
    partial_since: float | None = None
    partial_span = 0.0
    for e in events:
        if not isinstance(e, NodeUpserted) or e.node.zone != zone:
            continue
        old = records.get(e.node.name)
        records[e.node.name] = e.node
        if e.node.unreachable_taint and old is not None and not old.unreachable_taint:
            bad = sum(r.ready is not Readiness.TRUE for r in records.values())
            state = (
                "full"
                if bad == len(records)
                else "partial"
                if bad / len(records) >= DEFAULT_UNHEALTHY_ZONE_THRESHOLD
                else "normal"
            )
            taint_times[state].append(offset(e))
        bad = sum(r.ready is not Readiness.TRUE for r in records.values())
        partial = len(records) > bad / DEFAULT_UNHEALTHY_ZONE_THRESHOLD > 0 and bad < len(records)
        if partial and partial_since is None:
            partial_since = offset(e)
        elif not partial and partial_since is not None:
            partial_span += offset(e) - partial_since
            partial_since = None
    assert taint_times["normal"] and taint_times["full"]
    assert len(taint_times["partial"]) <= 0.01 * partial_span + 1.5
    for times in taint_times.values():
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert all(g >= 9.0 for g in gaps)


def test_etcd_slow_disk_fsync_climbs_then_leader_changes_exactly_once() -> None:
    events = run("etcd-slow-disk")
    members = sorted({e.target.instance for e in scrapes(events, "etcd-")})
    assert len(members) == 3
    by_member = {m: scrapes(events, m) for m in members}
    leaders: list[str] = []
    for e in scrapes(events, "etcd-"):
        if value(e.samples, "etcd_server_is_leader") == 1 and (
            not leaders or leaders[-1] != e.target.instance
        ):
            leaders.append(e.target.instance)
    assert len(leaders) == 2, leaders
    first = leaders[0]
    for seq in by_member.values():
        changes = [value(e.samples, "etcd_server_leader_changes_seen_total") for e in seq]
        assert changes[-1] - changes[0] == 1
    failed = [value(e.samples, "etcd_server_proposals_failed_total") for e in by_member[first]]
    assert failed[-1] - failed[0] > 10
    seq = by_member[first]
    at = {round(offset(e)): e.samples for e in seq}
    times = sorted(at)

    def p99(lo: float, hi: float, family: str) -> float:
        a = at[min(times, key=lambda t: abs(t - lo))]
        b = at[min(times, key=lambda t: abs(t - hi))]
        return window_quantile(a, b, 0.99, family)

    assert p99(3, 28, "etcd_disk_wal_fsync_duration_seconds") < 0.005
    assert p99(100, 145, "etcd_disk_wal_fsync_duration_seconds") > 0.5
    assert p99(100, 145, "etcd_disk_backend_commit_duration_seconds") > 0.25
    slow = {round(offset(e)): value(e.samples, "etcd_server_slow_apply_total") for e in seq}
    assert slow[min(times)] == slow[min(times, key=lambda t: abs(t - 28))] == 0  # healthy
    assert slow[max(times)] > 0  # commits past 100 ms while the disk is slow
    api = scrapes(events, "apiserver-0")
    api_at = {round(offset(e)): e.samples for e in api}
    api_times = sorted(api_at)

    def api_p99(lo: float, hi: float, verb: str) -> float:
        a = api_at[min(api_times, key=lambda t: abs(t - lo))]
        b = api_at[min(api_times, key=lambda t: abs(t - hi))]
        return window_quantile(a, b, 0.99, "apiserver_request_duration_seconds", verb=verb)

    for verb in ("POST", "PUT", "PATCH", "DELETE"):
        assert api_p99(3, 28, verb) < 0.2
        assert api_p99(100, 145, verb) > 1.0


def test_apf_saturation_restart_resets_counters_then_workload_low_rejects() -> None:
    events = run("apf-saturation")
    restarted = "apiserver-1:6443"
    failed = [e for e in events if isinstance(e, ScrapeFailed)]
    assert failed and {e.target.instance for e in failed} == {restarted}
    seq = scrapes(events, restarted)
    starts = [value(e.samples, "process_start_time_seconds") for e in seq]
    assert len(set(starts)) == 2 and starts[-1] > starts[0]
    jump = starts.index(starts[-1])
    before = value(seq[jump - 1].samples, "apiserver_request_total")
    after = value(seq[jump].samples, "apiserver_request_total")
    assert after < before / 100
    storm = [e for e in scrapes(events, "apiserver-0") if 150 <= offset(e) <= 210]
    assert storm
    for e in storm:
        s = e.samples
        for reason in ("queue-full", "time-out"):
            assert (
                value(
                    s,
                    "apiserver_flowcontrol_rejected_requests_total",
                    priority_level="workload-low",
                    reason=reason,
                )
                > 0
            )
        assert value(s, "apiserver_request_total", code="429") > 0
        assert (
            value(
                s, "apiserver_flowcontrol_current_inqueue_requests", priority_level="workload-low"
            )
            > 100
        )
        assert (
            value(s, "apiserver_flowcontrol_rejected_requests_total", priority_level="system") == 0
        )
    early, late = scrapes(events, "apiserver-0")[3], storm[-1]
    wait = window_quantile(
        early.samples, late.samples, 0.99,
        "apiserver_flowcontrol_request_wait_duration_seconds",
        priority_level="workload-low", execute="true",
    )  # fmt: skip
    assert wait > 5.0
    calm = scrapes(events, "apiserver-0")[-1].samples
    assert value(calm, "apiserver_flowcontrol_current_inqueue_requests") == 0


def test_apf_dump_matches_the_metrics_of_the_same_scrape() -> None:
    events = run("apf-saturation")
    last: dict[str, MetricsScraped] = {}
    checked = 0
    levels: set[str] = set()
    for e in events:
        if isinstance(e, MetricsScraped):
            last[e.target.instance] = e
        elif isinstance(e, ApfDumpRead):
            samples = last[e.instance].samples
            for row in e.levels:
                pl = row.priority_level
                assert row.waiting_requests == value(
                    samples, "apiserver_flowcontrol_current_inqueue_requests", priority_level=pl
                )
                assert row.executing_requests == value(
                    samples, "apiserver_flowcontrol_current_executing_requests", priority_level=pl
                )
                rejected = (row.rejected_requests or 0) + (row.cancelled_requests or 0)
                assert rejected == pytest.approx(
                    value(
                        samples, "apiserver_flowcontrol_rejected_requests_total", priority_level=pl
                    ),
                    abs=2,
                )
                checked += 1
                levels.add(pl)
    assert checked > 100
    assert levels >= {"exempt", "system", "node-high", "leader-election", "workload-high",
                      "workload-low", "global-default", "catch-all"}  # fmt: skip


def test_idle_apiserver_limits_match_the_real_600_seat_defaults() -> None:
    first = scrapes(Simulator("steady", nodes=NODES).start(), "apiserver-0")[0].samples
    nominal = {
        pl: value(first, "apiserver_flowcontrol_nominal_limit_seats", priority_level=pl)
        for pl in ("system", "node-high", "leader-election", "workload-high", "workload-low",
                   "global-default", "catch-all")
    }  # fmt: skip
    assert nominal == {
        "system": 74, "node-high": 98, "leader-election": 25, "workload-high": 98,
        "workload-low": 245, "global-default": 49, "catch-all": 13,
    }  # fmt: skip


def test_apiserver_skew_leaves_one_instance_with_most_watches_and_one_idle() -> None:
    events = run("apiserver-skew")
    failed = {e.target.instance for e in events if isinstance(e, ScrapeFailed)}
    assert len(failed) == 3
    final: dict[str, Sequence[Sample]] = {
        e.target.instance: e.samples for e in scrapes(events, "apiserver-")
    }
    watches = {
        i: value(s, "apiserver_longrunning_requests", verb="WATCH") for i, s in final.items()
    }
    total = sum(watches.values())
    assert max(watches.values()) > 0.5 * total
    assert watches["apiserver-2:6443"] < 0.05 * total
    versions = {
        dict(s.labels)["git_version"]
        for ss in final.values()
        for s in ss
        if s.name == "kubernetes_build_info"
    }
    assert versions == {"v1.35.1"}
    first, last = scrapes(events, "apiserver-2")[-13], scrapes(events, "apiserver-2")[-1]
    idle_rps = (
        value(last.samples, "apiserver_request_total")
        - value(first.samples, "apiserver_request_total")
    ) / 60
    busy = scrapes(events, "apiserver-0")
    busy_rps = (
        value(busy[-1].samples, "apiserver_request_total")
        - value(busy[-13].samples, "apiserver_request_total")
    ) / 60
    assert idle_rps < 0.1 * busy_rps


FIT = re.compile(
    r"^0/(\d+) nodes are available: (.+)\. preemption: 0/(\d+) nodes are available: "
    r"(\d+) Preemption is not helpful for scheduling\.$"
)


def test_scheduler_backlog_piles_up_gpu_pods_keeps_gated_apart_and_reports_quota() -> None:
    events = run("scheduler-backlog")
    pods: dict[tuple[str, str], PendingPodUpserted] = {}
    for e in events:
        if isinstance(e, PendingPodUpserted):
            pods[(e.pod.namespace, e.pod.name)] = e
    trainers = [e.pod for (ns, _), e in pods.items() if ns == "ml-train"]
    assert len(trainers) > 200
    assert all(re.fullmatch(r"trainer-[bcdfghjklmnpqrstvwxz2456789]{5}", p.name) for p in trainers)
    assert all(p.wait is PodWait.UNSCHEDULABLE for p in trainers)
    for p in trainers:
        m = FIT.match(p.message)
        assert m, p.message
        assert int(m.group(1)) == int(m.group(3)) == int(m.group(4)) == NODES
        parts = m.group(2).split(", ")
        assert parts == sorted(parts)
        assert sum(int(x.split(" ", 1)[0]) for x in parts) == NODES
        assert any("Insufficient nvidia.com/gpu" in x for x in parts)
    gated = [e.pod for (ns, _), e in pods.items() if ns == "ml-queue"]
    assert gated and all(p.wait is PodWait.GATED for p in gated)
    warnings = [e for e in events if isinstance(e, WarningEvent)]
    assert any(w.reason == "FailedCreate" and "exceeded quota" in w.message for w in warnings)
    fs = [w for w in warnings if w.reason == "FailedScheduling" and w.namespace == "ml-train"]
    assert fs and max(w.count for w in fs) >= 3
    sched = scrapes(events, "kube-scheduler")
    early, mid, late = sched[5], sched[15], sched[-1]
    q = [value(s.samples, "scheduler_pending_pods", queue="unschedulable") for s in (early, mid)]
    assert q[0] < q[1]
    assert value(late.samples, "scheduler_pending_pods", queue="gated") == len(gated)
    attempts = [
        value(s.samples, "scheduler_schedule_attempts_total", result="unschedulable")
        for s in (early, mid, late)
    ]
    assert attempts[0] < attempts[1] < attempts[2]
    assert value(late.samples, "scheduler_unschedulable_pods", plugin="NodeResourcesFit") >= len(
        trainers
    )


# --------------------------------------------------------------------------
# volume and the async source


def test_volume_at_5000_nodes() -> None:
    sim = Simulator("zone-outage", nodes=5000)
    sim.start()
    sim.advance(60)
    costs = []
    for _ in range(5):
        t0 = time.perf_counter()
        batch = sim.advance(10)
        costs.append(time.perf_counter() - t0)
        assert len(batch) <= 5000 / 10 * 10 * 1.1 + 1000
    print(
        f"advance(10) at 5,000 nodes: best {min(costs) * 1000:.0f} ms, "
        f"worst {max(costs) * 1000:.0f} ms"
    )
    assert min(costs) < 0.5


async def test_source_emits_start_then_ticks_and_stops_quietly() -> None:
    batches: list[Sequence[Event]] = []
    source = SimulatorSource(Simulator("steady", nodes=300), speed=100.0, tick_s=0.01)
    assert source.name == "demo"
    task = asyncio.create_task(source.run(batches.append))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if len(batches) >= 3:
            break
    task.cancel()
    await task
    assert len(batches) >= 3
    assert isinstance(batches[0][0], SourceStarted)
    assert isinstance(batches[1][-1], ClockTick)
    assert any(isinstance(e, LeaseRenewed) for e in batches[1])


def test_generated_pod_names_never_repeat_among_pending_pods(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Over a day the 5-character suffixes repeat (`snapshot --demo zone-outage --at 86400`
    # ended in a KeyError). Force repeats: three suffixes for every pod ever made. Every
    # deletion must then name a pod that is pending, and no two pending pods share a name.
    from ktop.sources.sim import pods

    cycle = itertools.cycle(["aaaaa", "bbbbb", "ccccc"])
    real = pods.Scheduler._suffix
    monkeypatch.setattr(
        pods.Scheduler, "_suffix", lambda self, n: next(cycle) if n == 5 else real(self, n)
    )
    sim = Simulator("steady", nodes=50, zones=2, seed=3)
    pending: set[tuple[str, str]] = set()
    for e in sim.start():
        if isinstance(e, PendingPodUpserted):
            pending.add((e.pod.namespace, e.pod.name))
    for _ in range(120):
        for e in sim.advance(1.0):
            if isinstance(e, PendingPodUpserted):
                pending.add((e.pod.namespace, e.pod.name))
            elif isinstance(e, PendingPodDeleted):
                assert (e.namespace, e.name) in pending
                pending.remove((e.namespace, e.name))
