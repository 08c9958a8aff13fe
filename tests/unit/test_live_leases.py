"""Node Leases sampled instead of watched: what is read each round, and what the model
makes of a Lease read some time ago."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from benchmarks.scale.tools import ktop_leases_swept
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    ClockTick,
    Event,
    FeedFailed,
    FeedSynced,
    LeaseRenewed,
    LeasesSampled,
    NodeRecord,
    NodeUpserted,
    ObjectsSkipped,
    Readiness,
)
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.handlers import NodesHandler
from ktop.sources.live.leases import LAGGING_S, SWEEP_S, LeaseSampler
from ktop.sources.live.reads import NODE_LEASES
from ktop.sources.live.rows import Row
from ktop.sources.live.transport import KubeTransport
from ktop.ui.render.nodes import panel, summary_line
from tests.unit.fake_kube import Answer, Call, FakeApi, status_body

NAMES = [f"n{i:02d}" for i in range(10)]
NOW = 1000.0


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, events: Sequence[Event]) -> None:
        self.events.extend(events)


def iso(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


class Leases:
    """An apiserver's node Leases, paginated by name; renew times set by the test."""

    def __init__(self) -> None:
        self.renew = {n: NOW - 2.0 for n in NAMES}
        self.expire_tokens = False
        self.malformed: set[str] = set()
        """Leases whose ``spec`` is a string, not an object."""

    def lease(self, name: str) -> dict[str, Any]:
        if name in self.malformed:
            return {"metadata": {"name": name}, "spec": "oops"}
        return {"metadata": {"name": name}, "spec": {"renewTime": iso(self.renew[name])}}

    def route(self, c: Call) -> Answer:
        assert c.path == NODE_LEASES.path and c.verb == "list", c
        if "fieldSelector" in c.query:
            name = c.query["fieldSelector"].removeprefix("metadata.name=")
            items = [self.lease(name)] if name in self.renew else []
            return Answer(body={"items": items, "metadata": {}})
        limit = int(c.query["limit"])
        token = c.query.get("continue", "")
        if token and self.expire_tokens:
            return Answer(410, status_body(410, "continue token expired"))
        names = sorted(self.renew)
        start = names.index(token) if token else 0
        page = names[start : start + limit]
        rest = names[start + limit : start + limit + 1]
        meta = {"continue": rest[0]} if rest else {"resourceVersion": "9"}
        return Answer(body={"items": [self.lease(n) for n in page], "metadata": meta})


def sampler(leases: Leases, not_ready: set[str], per_round: int = 3) -> tuple[LeaseSampler, Any]:
    api = FakeApi(leases.route)
    t = KubeTransport(api, CostMeter())  # type: ignore[arg-type]
    s = LeaseSampler(
        t, NODE_LEASES, lambda: NOW, lambda: not_ready, per_round=per_round, by_name_per_round=2
    )
    return s, api


def read(api: Any, since: int) -> list[dict[str, str]]:
    return [c.query for c in api.calls[since:]]


async def test_each_round_reads_a_page_in_rotation_then_sick_and_lagging_nodes_by_name() -> None:
    leases = Leases()
    leases.renew["n07"] = NOW - (LAGGING_S + 30.0)  # a node that stopped renewing
    not_ready = {"n02", "n05", "n08"}
    s, api = sampler(leases, not_ready)
    emit = Recorder()
    await s.lease_list(emit)
    assert isinstance(emit.events[0], LeasesSampled)
    assert (emit.events[0].per_round, emit.events[0].period_s) == (3, 10.0)
    assert [e for e in emit.events if isinstance(e, FeedSynced)]
    first = len(api.calls)
    await s.round(emit)
    q = read(api, first)
    # One page of three from the start of the sweep (n02 is on it), then two of the
    # three other sick nodes by name.
    assert q[0] == {"limit": "3"}
    assert [x.get("fieldSelector") for x in q[1:]] == ["metadata.name=n05", "metadata.name=n07"]
    assert all(x["limit"] == "1" for x in q[1:])
    second = len(api.calls)
    await s.round(emit)
    q = read(api, second)
    assert q[0] == {"limit": "3", "continue": "n03"}
    assert [x.get("fieldSelector") for x in q[1:]] == ["metadata.name=n08"]
    # Every read Lease became a renewal observed now.
    renewals = [e for e in emit.events if isinstance(e, LeaseRenewed)]
    assert all(e.at == NOW for e in renewals)
    assert {e.node for e in renewals} == set(NAMES)


async def test_an_expired_continue_token_starts_the_sweep_again() -> None:
    leases = Leases()
    s, api = sampler(leases, set())
    emit = Recorder()
    await s.lease_list(emit)
    await s.round(emit)
    leases.expire_tokens = True
    start = len(api.calls)
    await s.round(emit)
    assert read(api, start) == [{"limit": "3", "continue": "n03"}, {"limit": "3"}]


def test_a_sampled_lease_lag_is_its_lag_when_read_not_its_age_now() -> None:
    m = ClusterModel()
    place = ("r", "zone-a", "rack-1")
    events: list[Event] = [LeasesSampled(100.0, 200, 10.0)]
    for name, ready in (("a", Readiness.TRUE), ("b", Readiness.UNKNOWN)):
        rec = NodeRecord(name, *place, ready, None)
        events.append(NodeUpserted(100.0, rec))
    # "a" read at 100 s, renewed 3 s before; "b" read at 200 s, renewed 50 s before.
    events += [LeaseRenewed(100.0, "a", 97.0), LeaseRenewed(200.0, "b", 150.0)]
    events += [FeedSynced(200.0, "nodes"), FeedSynced(200.0, "leases")]
    m.apply_all(events)
    m.apply(ClockTick(400.0))  # long after: a read Lease does not age
    n = m.snapshot().nodes
    zone = n.zones[0]
    assert zone.lease_lag_max_s.or_(-1) == 50.0
    assert [x.lease_lag_s.or_(-1) for x in n.not_ready_nodes] == [50.0]
    assert n.lease_sample == (200, 10.0)
    line = summary_line(n).plain
    assert "sampled: 200 Leases every 10 s" in line


def test_watched_rows_without_objects_keep_the_listed_place_and_fetch_new_nodes() -> None:
    wanted: list[str] = []
    h = NodesHandler("rack", wanted.append)
    listed = {
        "metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "z1", "rack": "r7"}},
        "cells": {"Name": "n1", "Status": "Ready"},
    }
    (up,) = h.upsert(1.0, Row(listed))
    assert isinstance(up, NodeUpserted)
    row = {"metadata": {"name": "n1"}, "cells": {"Name": "n1", "Status": "NotReady"}}
    (up,) = h.upsert(2.0, Row(row, no_object=True))
    assert isinstance(up, NodeUpserted)
    assert (up.node.zone, up.node.rack, up.node.ready) == ("z1", "r7", Readiness.FALSE)
    assert h.not_ready == {"n1"}
    new = Row(
        {"metadata": {"name": "n2"}, "cells": {"Name": "n2", "Status": "Ready"}}, no_object=True
    )
    assert list(h.upsert(3.0, new)) == []
    assert wanted == ["n1", "n2"]


def test_a_clock_tick_rebuilds_the_nodes_area_only_when_it_shows_the_clock() -> None:
    def model(ready: Readiness, sampled: bool) -> ClusterModel:
        m = ClusterModel()
        events: list[Event] = [LeasesSampled(1.0, 200, 10.0)] if sampled else []
        events += [
            NodeUpserted(1.0, NodeRecord("a", "r", "z", "k", ready, None)),
            LeaseRenewed(1.0, "a", 0.5),
            FeedSynced(1.0, "nodes"),
            FeedSynced(1.0, "leases"),
        ]
        m.apply_all(events)
        return m

    for ready, sampled, same in (
        (Readiness.TRUE, True, True),  # lags as read, nothing aged: the same snapshot
        (Readiness.TRUE, False, False),  # lags grow with the clock
        (Readiness.FALSE, True, False),  # "NotReady for" grows with the clock
    ):
        m = model(ready, sampled)
        before = m.snapshot().nodes
        m.apply(ClockTick(5.0))
        assert (m.snapshot().nodes is before) is same, (ready, sampled)


async def test_when_more_leases_lag_than_a_page_holds_only_not_ready_nodes_are_read_by_name() -> (
    None
):
    leases = Leases()
    for name in NAMES[:4]:  # four lag, more than a page of three
        leases.renew[name] = NOW - (LAGGING_S + 5.0)
    s, api = sampler(leases, {"n09"})
    emit = Recorder()
    await s.lease_list(emit)
    start = len(api.calls)
    await s.round(emit)
    assert [x.get("fieldSelector") for x in read(api, start)[1:]] == ["metadata.name=n09"]


def test_a_keyframe_keeps_that_leases_are_sampled() -> None:
    from ktop.model.state import export_state, import_state

    m = ClusterModel()
    m.apply_all(
        [
            LeasesSampled(1.0, 200, 10.0),
            NodeUpserted(1.0, NodeRecord("a", "r", "z", "k", Readiness.FALSE, None)),
            LeaseRenewed(100.0, "a", 60.0),
            FeedSynced(100.0, "nodes"),
            FeedSynced(100.0, "leases"),
        ]
    )
    m.apply(ClockTick(500.0))
    again = import_state(export_state(m))
    assert again.nodes.sampling == (200, 10.0)
    (node,) = again.snapshot().nodes.not_ready_nodes
    assert node.lease_lag_s.or_(-1) == 40.0  # as read at 100 s, not 440 s


async def test_a_malformed_lease_is_skipped_and_counted_and_the_rotation_goes_on() -> None:
    leases = Leases()
    leases.malformed = {"n01"}
    s, api = sampler(leases, not_ready={"n01"}, per_round=2)
    emit = Recorder()
    await s.lease_list(emit)
    listed = [e for e in emit.events if isinstance(e, ObjectsSkipped)]
    assert [(e.feed, e.skipped_total) for e in listed] == [(NODE_LEASES.feed, 1)]
    assert "spec" in listed[0].example
    del emit.events[:]
    first = len(api.calls)
    await s.round(emit)  # a page of n00 (good) and n01 (bad), then n01 by name
    q = read(api, first)
    assert q[0] == {"limit": "2"}
    assert q[1].get("fieldSelector") == "metadata.name=n01"
    assert [e.node for e in emit.events if isinstance(e, LeaseRenewed)] == ["n00"]
    skipped = [e for e in emit.events if isinstance(e, ObjectsSkipped)]
    # Once on the page, once read by name: the count is the feed's since start.
    assert [e.skipped_total for e in skipped] == [2, 3]
    assert not [e for e in emit.events if isinstance(e, FeedFailed)]
    assert s.cont == "n02"  # the rotation moved past the bad Lease
    second = len(api.calls)
    await s.round(emit)
    assert read(api, second)[0] == {"limit": "2", "continue": "n02"}


async def test_the_feed_is_listed_after_one_page_and_the_first_sweep_goes_on_a_page_a_second(
    monkeypatch: Any,
) -> None:
    """At start one page of Leases, not all of them: the feed counts as listed, then the
    rest of the first sweep is read a whole page every SWEEP_S (the not-Ready nodes' by name
    at most every period), then rounds of ``per_round`` every period from the start again."""
    leases = Leases()
    not_ready = {"n09"}
    api = FakeApi(leases.route)
    clock = [NOW]
    s = LeaseSampler(
        KubeTransport(api, CostMeter()),  # type: ignore[arg-type]
        replace(NODE_LEASES, page_size=4),
        lambda: clock[0],
        lambda: not_ready,
        per_round=3,
        by_name_per_round=2,
    )
    emit = Recorder()
    await s.lease_list(emit)
    assert read(api, 0) == [{"limit": "4"}]
    assert isinstance(emit.events[0], LeasesSampled) and isinstance(emit.events[-1], FeedSynced)
    assert {e.node for e in emit.events if isinstance(e, LeaseRenewed)} == set(NAMES[:4])
    assert s.sweeping

    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock[0] += seconds
        if len(sleeps) == 4:
            raise asyncio.CancelledError

    monkeypatch.setattr("ktop.sources.live.leases.asyncio.sleep", sleep)
    start = len(api.calls)
    with pytest.raises(asyncio.CancelledError):
        await s.run(Recorder())
    # run() reads the first page again (a new start), then the sweep: pages of 4 a second.
    assert sleeps == [SWEEP_S, SWEEP_S, 10.0, 10.0]
    q = read(api, start)
    assert q == [
        {"limit": "4"},
        {"limit": "4", "continue": "n04"},
        {"limit": "1", "fieldSelector": "metadata.name=n09"},
        {"limit": "4", "continue": "n08"},  # 1 s later: no by-name reads yet
        {"limit": "3"},  # the sweep is done: rounds of per_round from the start
        {"limit": "1", "fieldSelector": "metadata.name=n09"},
    ]
    assert not s.sweeping


def test_the_nodes_pane_says_how_many_leases_were_read_while_the_first_sweep_runs() -> None:
    m = ClusterModel()
    names = [f"n{i}" for i in range(5)]
    events: list[Event] = [LeasesSampled(100.0, 200, 10.0)]
    events += [
        NodeUpserted(100.0, NodeRecord(n, "r", "zone-a", "", Readiness.TRUE, None)) for n in names
    ]
    read_so_far = names[:2]
    events += [LeaseRenewed(100.0, n, 99.0) for n in read_so_far]
    events += [FeedSynced(100.0, "nodes"), FeedSynced(100.0, "leases")]
    m.apply_all(events)
    n = m.snapshot().nodes
    assert n.leases_read == len(read_so_far)
    assert f"{len(read_so_far)} of {len(names)} nodes' Leases read so far" in summary_line(n).plain
    assert f"(of {len(read_so_far)} read)" in panel(n, None, 10, 160).title.plain
    # the benchmark's idle window waits for this header to go
    assert not ktop_leases_swept(panel(n, None, 10, 160).title.plain)
    m.apply_all([LeaseRenewed(101.0, x, 100.0) for x in names[2:]])
    n = m.snapshot().nodes
    assert n.leases_read == len(names)
    assert "read so far" not in summary_line(n).plain
    assert "read)" not in panel(n, None, 10, 160).title.plain
    assert ktop_leases_swept(panel(n, None, 10, 160).title.plain)
