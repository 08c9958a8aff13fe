"""A long list of pending pods: the first page whole, the rest as Table rows without
objects, then watched whole, against a fake apiserver that pages one list by key (as
etcd does) in either representation. The pods' own fields decide what each must become
(computed here from the objects, not by the converters under test); the counts stay
exact while rows give way to the objects the watch sends, names repeated across
namespaces included."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ktop.model.area_scheduler import PendingPods
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_PENDING_PODS,
    Event,
    FeedSynced,
    PodWait,
    is_row,
)
from ktop.sources.convert import parse_age
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.handlers import PendingPodsHandler
from ktop.sources.live.listwatch import ListWatch
from ktop.sources.live.reads import WATCHES
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi

NOW = 1_800_000_000.0
RV = "777"
COLUMNS = ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
           "Readiness Gates"]  # fmt: skip
RESOURCE = next(r for r in WATCHES if r.feed == FEED_PENDING_PODS)


def human_duration(seconds: int) -> str:
    """Go's ``duration.HumanDuration`` (k8s.io/apimachinery), which a Table's Age prints."""
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _precision(seconds: int) -> int:
    """How much of the age the printed form drops at most (its smallest unit less one)."""
    for limit, unit in ((120, 1), (600, 1), (3 * 3600, 60), (8 * 3600, 60), (48 * 3600, 3600)):
        if seconds < limit:
            return unit - 1
    return 86400 * 365  # days then years: coarse, and far beyond any pending pod


@given(st.integers(min_value=0, max_value=3 * 365 * 86400))
def test_an_age_cell_reads_back_to_the_age_within_what_it_prints(seconds: int) -> None:
    age = parse_age(human_duration(seconds))
    assert age is not None
    assert seconds - _precision(seconds) <= age <= seconds


def test_an_age_cell_that_is_no_duration_is_none() -> None:
    assert [parse_age(v) for v in ("<unknown>", "<invalid>", "", "5x", "m")] == [None] * 5


def pod(ns: str, name: str, wait: PodWait, age_s: int) -> dict[str, Any]:
    """A Pending pod whose fields make it wait as ``wait`` says."""
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "registry/app:1" * 20}]}
    conditions: list[dict[str, Any]] = []
    if wait is PodWait.BOUND_NOT_STARTED:
        spec["nodeName"] = f"node-{len(name)}"
    elif wait is PodWait.GATED:
        spec["schedulingGates"] = [{"name": "example.com/admission"}]
        conditions.append({"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"})
    elif wait is PodWait.UNSCHEDULABLE:
        message = "0/3 nodes are available: 3 Insufficient cpu."
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
            }
        )
    created = NOW - age_s
    stamp = _stamp(created)
    return {
        "metadata": {"namespace": ns, "name": name, "creationTimestamp": stamp,
                     "managedFields": [{"manager": "kube-controller-manager", "x": "y" * 500}]},
        "spec": spec,
        "status": {"phase": "Pending", "conditions": conditions},
    }  # fmt: skip


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cells(p: dict[str, Any]) -> list[Any]:
    """The pod printer's columns for a Pending pod (as the apiserver prints them)."""
    gated = any(c.get("reason") == "SchedulingGated" for c in p["status"]["conditions"])
    age = int(NOW - _created(p))
    node = p["spec"].get("nodeName") or "<none>"
    status = "SchedulingGated" if gated else "Pending"
    return [p["metadata"]["name"], "0/1", status, 0, human_duration(age), "<none>", node, "<none>",
            "<none>"]  # fmt: skip


def _created(p: dict[str, Any]) -> float:
    return datetime.fromisoformat(p["metadata"]["creationTimestamp"]).timestamp()


def expected_wait(p: dict[str, Any]) -> PodWait:
    """Why the pod waits, read from its fields here (the API's meaning of each)."""
    if p["spec"].get("nodeName"):
        return PodWait.BOUND_NOT_STARTED
    for c in p["status"]["conditions"]:
        if c["type"] == "PodScheduled" and c["reason"] == "SchedulingGated":
            return PodWait.GATED
        if c["type"] == "PodScheduled" and c["reason"] == "Unschedulable":
            return PodWait.UNSCHEDULABLE
    return PodWait.NOT_ATTEMPTED


def cluster(seed: int = 3) -> list[dict[str, Any]]:
    """1,300 pending pods in 13 namespaces; ``web-0``..``web-2`` in every namespace."""
    rng = random.Random(seed)
    waits = list(PodWait)
    waits.remove(PodWait.NOT_BOUND)  # a pod's own fields never say "not read"
    pods = []
    for n in range(13):
        for i in range(97):
            pods.append(pod(f"ns-{n:02d}", f"job-{n}-{i}", rng.choice(waits), rng.randint(1, 9000)))
        for i in range(3):
            pods.append(pod(f"ns-{n:02d}", f"web-{i}", rng.choice(waits), rng.randint(1, 9000)))
    return pods


class PodsApiserver:
    """One list of pods paged by key, as objects or (``includeObject=None``) as Table rows
    without objects; a continue token continues the same list in either form."""

    def __init__(self, pods: list[dict[str, Any]], watch: list[dict[str, Any]] | None = None):
        key = lambda p: (p["metadata"]["namespace"], p["metadata"]["name"])  # noqa: E731
        self.pods = sorted(pods, key=key)
        self.watch = watch or []
        self.calls: list[Call] = []

    def __call__(self, call: Call) -> Answer:
        assert call.path == RESOURCE.path
        assert call.query["fieldSelector"] == "status.phase=Pending"
        self.calls.append(call)
        if call.verb == "watch":
            assert "includeObject" not in call.query  # the watch sends whole objects
            return Answer(lines=self.watch)
        start = int(call.query.get("continue") or 0)
        end = start + int(call.query["limit"])
        page = self.pods[start:end]
        meta: dict[str, Any] = {"resourceVersion": RV}
        if end < len(self.pods):
            meta["continue"] = str(end)
        if call.query.get("includeObject") == "None":
            return Answer(body={
                "kind": "Table", "metadata": meta,
                "columnDefinitions": [{"name": c} for c in COLUMNS],
                "rows": [{"cells": cells(p)} for p in page],
            })  # fmt: skip
        return Answer(body={"kind": "PodList", "metadata": meta, "items": page})


Emit = Callable[[Sequence[Event]], None]


async def listed(
    server: PodsApiserver, whole_first: int = RESOURCE.whole_first
) -> tuple[ListWatch, PendingPods, CostMeter, Emit]:
    meter = CostMeter()
    t = KubeTransport(FakeApi(server), meter)  # type: ignore[arg-type]
    res = dataclasses.replace(RESOURCE, whole_first=whole_first)
    lw = ListWatch(t, res, PendingPodsHandler(), lambda: NOW, rng=random.Random(1))
    cluster = ClusterModel()  # the model's own fold of the events
    model = cluster.pending
    events: list[Event] = []

    def emit(batch: Sequence[Event]) -> None:
        events.extend(batch)
        cluster.apply_all(batch)

    await lw.list_all(emit)
    assert isinstance(events[-1], FeedSynced)
    return lw, model, meter, emit


async def test_the_first_page_is_whole_and_the_rest_rows_every_pod_counted() -> None:
    pods = cluster()
    server = PodsApiserver(pods)
    lw, model, _, _ = await listed(server)
    whole = RESOURCE.whole_first
    assert lw.rv == RV
    # one list: a page of whole objects, then rows continuing it
    lists = server.calls
    assert lists[0].query["limit"] == str(whole) and "includeObject" not in lists[0].query
    assert all(c.query["includeObject"] == "None" and c.query["continue"] for c in lists[1:])
    records = list(model.pods.values())
    assert len(records) == len(pods)
    first, rest = server.pods[:whole], server.pods[whole:]
    by_key = {(r.namespace, r.name): r for r in records}
    for p in first:  # read whole: exactly what its fields say
        rec = by_key[(p["metadata"]["namespace"], p["metadata"]["name"])]
        assert rec.wait is expected_wait(p) and rec.created == _created(p)
    rows = [r for r in records if is_row(r.namespace)]
    assert len(rows) == len(rest)
    assert Counter(r.name for r in rows) == Counter(p["metadata"]["name"] for p in rest)
    # a row's wait class is as exact as a row can say: not bound covers the rest
    row_wait = {PodWait.UNSCHEDULABLE: PodWait.NOT_BOUND, PodWait.NOT_ATTEMPTED: PodWait.NOT_BOUND}
    expected = Counter(row_wait.get(expected_wait(p), expected_wait(p)) for p in rest)
    assert Counter(r.wait for r in rows) == expected
    for r in rows:
        assert not r.message
    # ages from the printed age: never later than the pod's creation, within its precision
    created = sorted(_created(p) for p in rest)
    assert sorted(r.created for r in rows) >= created
    assert (
        max(abs(a - b) for a, b in zip(sorted(r.created for r in rows), created, strict=True)) < 60
    )


async def test_rows_cost_a_fraction_of_whole_objects() -> None:
    pods = cluster()
    _, rows_model, rows_meter, _ = await listed(PodsApiserver(pods))
    _, whole_model, whole_meter, _ = await listed(PodsApiserver(pods), whole_first=0)
    assert len(rows_model.pods) == len(whole_model.pods) == len(pods)
    assert rows_meter.bytes_total * 2 < whole_meter.bytes_total


def _event(kind: str, p: dict[str, Any]) -> dict[str, Any]:
    obj = {**p, "metadata": {**p["metadata"], "resourceVersion": "800"}}
    return {"type": kind, "object": obj}


async def test_watched_objects_take_the_place_of_their_rows_and_the_count_stays_exact() -> None:
    pods = cluster()
    server = PodsApiserver(pods)
    lw, model, _, emit = await listed(server)
    rows = server.pods[RESOURCE.whole_first :]
    webs = [p for p in rows if p["metadata"]["name"] == "web-1"]
    assert len(webs) > 2  # a name listed as rows in several namespaces
    changed, deleted, started = webs[0], webs[1], webs[2]
    scheduled = {**started, "status": {**started["status"], "phase": "Running"}}
    new = pod("ns-99", "web-1", PodWait.NOT_ATTEMPTED, 1)
    server.watch = [
        _event("MODIFIED", changed),
        _event("DELETED", deleted),
        _event("MODIFIED", scheduled),  # left Pending (a watch with a selector says DELETED too)
        _event("ADDED", new),
        _event("MODIFIED", changed),  # known by now: no other row gives way
    ]
    truth = Counter((p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods)
    for gone in (deleted, started):
        del truth[(gone["metadata"]["namespace"], "web-1")]
    truth[("ns-99", "web-1")] += 1
    await lw.watch_once(emit)
    records = list(model.pods.values())
    assert len(records) == sum(truth.values())
    web1 = [r for r in records if r.name == "web-1"]
    assert len(web1) == sum(n for (_, name), n in truth.items() if name == "web-1")
    known = {r.namespace for r in web1 if not is_row(r.namespace)}
    expected_known = {p["metadata"]["namespace"] for p in server.pods[: RESOURCE.whole_first]
                      if p["metadata"]["name"] == "web-1"}  # fmt: skip
    assert known == expected_known | {changed["metadata"]["namespace"], "ns-99"}


async def test_a_relist_replaces_rows_and_objects_alike() -> None:
    pods = cluster()
    server = PodsApiserver(pods)
    lw, model, _, emit = await listed(server)
    server.watch = [_event("MODIFIED", p) for p in server.pods[-50:]]  # rows become objects
    await lw.watch_once(emit)
    server.pods = server.pods[100:]  # a hundred pods started meanwhile
    await lw.list_all(emit)
    assert len(model.pods) == len(server.pods)
    expected = Counter(p["metadata"]["name"] for p in server.pods)
    assert Counter(r.name for r in model.pods.values()) == expected
