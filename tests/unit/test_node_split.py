"""The node list split by zone (rows without objects, each zone's place from its label
selector) against a fake apiserver that evaluates label selectors as the apiserver does:
every node ends with the place its own labels give (computed here from the labels, as
the node lifecycle controller reads them), the same as the list with metadata, at a
fraction of the bytes; a first page that is not plain keeps the list with metadata."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ktop.model.events import Event, FeedProgress, FeedSynced, NodeRecord, NodeUpserted
from ktop.sources.live import list_plan
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError
from ktop.sources.live.handlers import NodesHandler
from ktop.sources.live.listwatch import ListWatch
from ktop.sources.live.node_split import plan
from ktop.sources.live.reads import NODES, WATCHES
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi

LEGACY_ZONE = "failure-domain.beta.kubernetes.io/zone"
ZONE = "topology.kubernetes.io/zone"
LEGACY_REGION = "failure-domain.beta.kubernetes.io/region"
REGION = "topology.kubernetes.io/region"
EXCLUDE = "node.kubernetes.io/exclude-disruption"
RACK = "topology.ktop.dev/rack"
COLUMNS = ["Name", "Status", "Roles", "Age", "Version"]
RV = "4242"
FIXTURES = Path(__file__).parents[1] / "fixtures"


def node(name: str, labels: dict[str, str], status: str = "Ready") -> dict[str, Any]:
    meta = {
        "name": name,
        "labels": labels,
        "annotations": {"note": "x" * 400},  # metadata is most of a real node row
        "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": "y" * 600}}],
    }
    return {"meta": meta, "cells": [name, status, "<none>", "10d", "v1.35.4"]}


def plain(
    name: str, zone: str, region: str = "r1", status: str = "Ready", both: bool = False
) -> dict[str, Any]:
    labels = {ZONE: zone, REGION: region, "kubernetes.io/os": "linux"}
    if both:  # as real nodes are labelled: the legacy keys too, with the same values
        labels |= {LEGACY_ZONE: zone, LEGACY_REGION: region}
    return node(name, labels, status)


def cluster(odd: bool = True, both: bool = False) -> list[dict[str, Any]]:
    """2,400 nodes in zones a, b, c of r1 (standard zone keys, or both keys as real nodes
    have them); past the first page, nodes each list of the split must catch."""
    nodes = [
        plain(
            f"node-{i:05d}", "abc"[i % 3], status="NotReady" if i % 97 == 0 else "Ready", both=both
        )
        for i in range(2_400)
    ]
    nodes[700] = plain("node-00700", "b", status="Ready,SchedulingDisabled", both=both)
    if odd:
        nodes += [
            node("odd-1-legacy-zone", {LEGACY_ZONE: "old-z", ZONE: "a", REGION: "r1"}),
            node("odd-2-legacy-region", {ZONE: "a", LEGACY_REGION: "old-r", REGION: "r1"}),
            node("odd-3-excluded", {ZONE: "b", REGION: "r1", EXCLUDE: ""}, "NotReady"),
            node("odd-4-racked", {ZONE: "c", REGION: "r1", RACK: "rack-9"}),
            node("odd-5-zone-d", {ZONE: "d", REGION: "r1"}),
            node("odd-6-other-region", {ZONE: "a", REGION: "r2"}),
            node("odd-7-no-labels", {}),
            node("odd-8-no-region", {ZONE: "c"}),
            node("odd-9-legacy-only", {LEGACY_ZONE: "b", LEGACY_REGION: "r1"}),
            node("odd-10-keys-differ", {LEGACY_ZONE: "c", ZONE: "a", REGION: "r1"}),
            node("odd-11-empty-zone", {LEGACY_ZONE: "", ZONE: "a", REGION: "r1"}),
            node("odd-12-both-other-region", {LEGACY_ZONE: "a", ZONE: "a", LEGACY_REGION: "r3"}),
        ]
    return nodes


def _terms(selector: str) -> list[str]:
    return [t.strip() for t in re.split(r",(?![^()]*\))", selector) if t.strip()]


def matches(labels: dict[str, str], selector: str) -> bool:
    """Label selector semantics (the subset ktop uses), written here from the API docs."""
    for term in _terms(selector):
        if m := re.fullmatch(r"(\S+) notin \((.*)\)", term):
            if labels.get(m[1]) in m[2].split(","):
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif "!=" in term:
            k, v = term.split("!=")
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = term.split("=")
            if k not in labels or labels[k] != v:
                return False
        elif term not in labels:
            return False
    return True


class Apiserver:
    """Node lists as Tables, filtered by label selector, with or without objects; the
    bytes of every answer counted by the transport's meter. Paged as the apiserver pages:
    a first page, or a list not older than a version without ``limit``, is served from
    its watch cache; a continued page is an exact read at the list's version, which
    (with no snapshot of it in the cache, as on a cluster whose nodes stand still) comes
    from etcd. ``lagging``: the cache has not caught up with the version asked for (504).
    """

    def __init__(self, nodes: list[dict[str, Any]], lagging: bool = False) -> None:
        self.nodes = sorted(nodes, key=lambda n: n["meta"]["name"])
        self.selectors: list[str] = []
        self.reads: list[tuple[str, str]] = []
        """(selector, "cache" or "etcd") of every list answered."""
        self.lagging = lagging

    def __call__(self, call: Call) -> Answer:
        assert call.path == NODES and call.verb == "list"
        selector = call.query.get("labelSelector", "")
        self.selectors.append(selector)
        chosen = [n for n in self.nodes if matches(n["meta"]["labels"], selector)]
        start = int(call.query.get("continue") or 0)
        if call.query.get("continue") and "resourceVersion" in call.query:
            return Answer(status=422, body={"kind": "Status", "code": 422})
        if call.query.get("resourceVersionMatch") == "NotOlderThan":
            assert call.query["resourceVersion"] == RV
            if self.lagging:
                return Answer(status=504, body={"kind": "Status", "code": 504})
        self.reads.append((selector, "etcd" if start else "cache"))
        limit = int(call.query.get("limit", len(chosen) or 1))
        page = chosen[start : start + limit]
        with_objects = call.query.get("includeObject") == "Metadata"
        rows = [
            {"cells": n["cells"], **({"object": {"metadata": n["meta"]}} if with_objects else {})}
            for n in page
        ]
        meta: dict[str, Any] = {"resourceVersion": RV}
        if start + limit < len(chosen):
            meta["continue"] = str(start + limit)
            if not selector:  # the apiserver counts the rest only without a selector
                meta["remainingItemCount"] = len(chosen) - start - limit
        body = {
            "kind": "Table",
            "metadata": meta,
            "columnDefinitions": [{"name": c} for c in COLUMNS],
            "rows": rows,
        }
        return Answer(body=body)


def expected_place(labels: dict[str, str]) -> tuple[str, str, str, bool]:
    """(region, zone, rack, excluded): a legacy key first when it has a value, as the
    node lifecycle controller reads them."""
    zone = labels.get(LEGACY_ZONE) or labels.get(ZONE) or ""
    region = labels.get(LEGACY_REGION) or labels.get(REGION) or ""
    return region, zone, labels.get(RACK, ""), EXCLUDE in labels


async def listed(
    nodes: list[dict[str, Any]], split: bool, lagging: bool = False
) -> tuple[dict[str, NodeRecord], list[Event], Apiserver, CostMeter, ListWatch]:
    server = Apiserver(nodes, lagging)
    meter = CostMeter()
    t = KubeTransport(FakeApi(server), meter)  # type: ignore[arg-type]
    handler = NodesHandler(RACK, lambda name: None)
    resource = next(r for r in WATCHES if r.path == NODES)

    def by_zone(items: list[dict[str, Any]]) -> Any:
        return plan(items, RACK)

    lw = ListWatch(
        t, resource, handler, lambda: 1.0, rng=random.Random(1), split=by_zone if split else None
    )
    events: list[Event] = []

    def emit(batch: Sequence[Event]) -> None:
        events.extend(batch)

    await lw.list_all(emit)
    records = {e.node.name: e.node for e in events if isinstance(e, NodeUpserted)}
    return records, events, server, meter, lw


@pytest.mark.parametrize("both", [False, True], ids=["standard keys", "both keys"])
@pytest.mark.parametrize("odd", [True, False], ids=["odd nodes past page 1", "plain"])
async def test_every_node_has_the_place_its_labels_give_at_a_fraction_of_the_bytes(
    odd: bool, both: bool
) -> None:
    nodes = cluster(odd, both)
    split, events, server, split_meter, lw = await listed(nodes, split=True)
    whole, _, _, whole_meter, _ = await listed(nodes, split=False)
    assert any("notin" in s for s in server.selectors)  # the split was taken
    assert set(split) == {n["meta"]["name"] for n in nodes} == set(whole)
    for n in nodes:
        name = n["meta"]["name"]
        rec = split[name]
        assert (rec.region, rec.zone, rec.rack, rec.exclude_disruption) == expected_place(
            n["meta"]["labels"]
        ), name
        assert rec == whole[name]  # the same record as the list with metadata gives
    # the first page (a fifth of this small cluster) comes with metadata all the same
    assert split_meter.bytes_total * 3 < whole_meter.bytes_total
    assert lw.rv == RV and isinstance(events[-1], FeedSynced)


def _zone_lists(server: Apiserver) -> list[tuple[str, str]]:
    """The reads of the split's zone lists (those that pin a zone and exclude racks)."""
    return [(sel, src) for sel, src in server.reads if f"!{RACK}" in sel]


async def test_each_zone_list_is_one_read_from_the_watch_cache_not_etcd(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes = cluster(odd=False)
    monkeypatch.setattr(list_plan, "ROWS_ONLY_PAGES", 1)  # a zone (800 nodes) > a page (500)
    records, _, server, _, _ = await listed(nodes, split=True)
    zone_reads = _zone_lists(server)
    assert sorted({sel for sel, _ in zone_reads}) == sorted(sel for sel, _ in zone_reads)
    assert len(zone_reads) == 3 and {src for _, src in zone_reads} == {"cache"}
    assert set(records) == {n["meta"]["name"] for n in nodes}


async def test_beyond_the_cache_read_bound_zone_lists_are_paged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes = cluster(odd=True)
    monkeypatch.setattr(list_plan, "CACHE_READ_MAX_NODES", len(nodes) - 1)
    monkeypatch.setattr(list_plan, "ROWS_ONLY_PAGES", 1)  # pages of 500 rows
    records, _, server, _, _ = await listed(nodes, split=True)
    assert "etcd" in {src for _, src in _zone_lists(server)}  # continued pages
    for n in nodes:
        rec = records[n["meta"]["name"]]
        assert (rec.region, rec.zone, rec.rack, rec.exclude_disruption) == expected_place(
            n["meta"]["labels"]
        )


async def test_a_cache_that_has_not_caught_up_is_paged_instead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes = cluster(odd=True)
    monkeypatch.setattr(list_plan, "ROWS_ONLY_PAGES", 1)
    records, events, server, _, _ = await listed(nodes, split=True, lagging=True)
    assert "etcd" in {src for _, src in _zone_lists(server)}
    assert set(records) == {n["meta"]["name"] for n in nodes}
    assert isinstance(events[-1], FeedSynced)


def by_zone_name(spoil_c: bool = False) -> list[dict[str, Any]]:
    """2,400 nodes named by their zone (a first page of 500 holds zone a only), the
    legacy and standard keys both set as real nodes have them; ``spoil_c``: zone c's
    first node carries a rack label (its list's first page is then not plain)."""
    nodes = [
        plain(f"{zone}-node-{i:04d}", zone, both=True, status="NotReady" if i % 50 else "Ready")
        for zone in "abc"
        for i in range(800)
    ]
    if spoil_c:
        labels = {**nodes[1600]["meta"]["labels"], RACK: "rack-1"}
        nodes[1600] = node("c-node-0000", labels)
    return nodes


@pytest.mark.parametrize("spoil_c", [False, True], ids=["plain", "zone c racked"])
async def test_zones_missed_by_the_first_page_are_learnt_from_the_rest(
    spoil_c: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = by_zone_name(spoil_c)
    monkeypatch.setattr(list_plan, "ROWS_ONLY_PAGES", 1)
    records, events, server, meter, _ = await listed(nodes, split=True)
    whole, _, _, whole_meter, _ = await listed(nodes, split=False)
    assert set(records) == {n["meta"]["name"] for n in nodes} == set(whole)
    for n in nodes:
        name = n["meta"]["name"]
        assert (records[name].region, records[name].zone, records[name].rack) == (
            expected_place(n["meta"]["labels"])[:3]
        ), name
        assert records[name] == whole[name]
    zone_lists = {sel.split(",")[0] for sel, _ in _zone_lists(server)}
    learnt = {f"{LEGACY_ZONE}=a", f"{LEGACY_ZONE}=b"} | (set() if spoil_c else {f"{LEGACY_ZONE}=c"})
    assert zone_lists == learnt
    assert {src for _, src in _zone_lists(server)} == {"cache"}
    if not spoil_c:  # zone c paged with metadata otherwise
        assert "etcd" not in {src for _, src in server.reads}
        # a page of 500 with metadata a zone (of 800 here), the rest rows only
        assert meter.bytes_total < whole_meter.bytes_total * 0.75
    assert isinstance(events[-1], FeedSynced)


async def test_a_failing_list_of_the_split_fails_the_list_as_itself() -> None:
    """The split's lists go at once; one that fails ends the list with its own error
    (which the feed's loop reports and retries), not a group of them."""
    nodes = cluster(odd=True)
    server = Apiserver(nodes)

    def refusing(call: Call) -> Answer:
        if call.query.get("labelSelector") == EXCLUDE:
            return Answer(status=500, body={"kind": "Status", "code": 500, "message": "boom"})
        return server(call)

    t = KubeTransport(FakeApi(refusing), CostMeter())  # type: ignore[arg-type]
    resource = next(r for r in WATCHES if r.path == NODES)
    lw = ListWatch(
        t,
        resource,
        NodesHandler(RACK, lambda name: None),
        lambda: 1.0,
        split=lambda items: plan(items, RACK),
    )
    events: list[Event] = []
    with pytest.raises(ApiError) as failed:
        await lw.list_all(events.extend)
    assert failed.value.status == 500 and "boom" in str(failed.value)
    assert not any(isinstance(e, FeedSynced) for e in events)


async def test_progress_counts_every_node_against_the_first_page_s_total() -> None:
    nodes = cluster()
    _, events, _, _, _ = await listed(nodes, split=True)
    progress = [e for e in events if isinstance(e, FeedProgress)]
    assert {e.expected for e in progress} == {len(nodes)}
    listed_counts = [e.listed for e in progress]
    assert listed_counts == sorted(listed_counts) and listed_counts[-1] == len(nodes)


@pytest.mark.parametrize(
    "spoiler",
    [
        {ZONE: "a", REGION: "r1", RACK: "rack-1"},
        {LEGACY_ZONE: "a", REGION: "r1"},
        {ZONE: "a", REGION: "r1", EXCLUDE: ""},
        {REGION: "r1"},
        {ZONE: "a", REGION: "r9"},
        {LEGACY_ZONE: "", ZONE: "a", REGION: "r1"},
        {ZONE: "a", REGION: ""},
    ],
    ids=[
        "racked",
        "another key decides the zone",
        "excluded",
        "no zone",
        "a zone in two regions",
        "an empty zone",
        "an empty region",
    ],
)
async def test_a_first_page_that_is_not_plain_keeps_the_list_with_metadata(
    spoiler: dict[str, str],
) -> None:
    nodes = [*cluster(odd=False), node("node-00000a", spoiler)]  # on the first page
    records, _, server, _, _ = await listed(nodes, split=True)
    assert set(server.selectors) == {""}  # no selector: page after page, with metadata
    assert records["node-00000a"].zone == expected_place(spoiler)[1]
    assert len(records) == len(nodes)


async def test_a_cluster_on_one_page_is_one_request() -> None:
    nodes = cluster(odd=False)[:300]
    records, _, server, _, _ = await listed(nodes, split=True)
    assert server.selectors == [""] and len(records) == 300


def test_the_plan_lists_each_zone_without_objects_and_the_rest_with_them() -> None:
    items = [{"metadata": n["meta"]} for n in cluster(odd=False)[:500]]
    lists = plan(items, RACK)
    assert lists is not None
    places = [s.place for s in lists if s.place is not None]
    assert places == [("r1", "a", "", False), ("r1", "b", "", False), ("r1", "c", "", False)]
    rest = [s.selector for s in lists if s.place is None]
    assert f"{ZONE} notin (a,b,c)" in rest and RACK in rest and EXCLUDE in rest


def test_a_real_cluster_s_nodes_are_split_on_the_keys_that_decide() -> None:
    """Real GCP nodes (OpenShift) carry both zone keys with equal values: the legacy ones
    decide, so the zone lists pin them, and the zones are the real cluster's."""
    node_list = (
        Path(__file__).parents[1] / "fixtures" / "openshift-insights_gcp-3zone_nodelist.json"
    )
    items = json.loads(node_list.read_text(encoding="utf-8"))["items"]
    lists = plan(items, RACK)
    assert lists is not None
    zones = {n["metadata"]["labels"][LEGACY_ZONE] for n in items}
    places = {s.place for s in lists if s.place is not None}
    assert places == {("us-east1", z, "", False) for z in zones}
    for s in lists:
        if s.place is not None:
            assert f"{LEGACY_ZONE}={s.place[1]}" in s.selector.split(",")
    # every real node falls in its zone's list (selectors as the apiserver reads them)
    for n in items:
        labels = n["metadata"]["labels"]
        held = [s.place for s in lists if s.place is not None and matches(labels, s.selector)]
        assert held == [expected_place(labels)]
