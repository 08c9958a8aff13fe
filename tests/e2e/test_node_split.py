"""The node list split by zone against the real apiserver: its label selectors (``notin``,
``!=``, ``!key``, ``key``) and Tables without objects mean what ktop reads them to mean.

The lab's nodes carry the lab's rack label, so ktop is given another rack label (one no
node has) for the planner to find the first page plain; pages of 20 make the lab's 200
nodes many pages. Every node must then end with the place its own labels give, read
from the API's whole node objects, and the same record as the list with metadata.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import pytest

from ktop.lab import Lab
from ktop.lab.util import http_get
from ktop.model.events import Event, NodeRecord, NodeUpserted
from ktop.model.exposition import parse_exposition
from ktop.scrub import Secrets
from ktop.sources.convert import EXCLUDE_DISRUPTION, REGION_LABELS, ZONE_LABELS
from ktop.sources.live import list_plan
from ktop.sources.live.client import connect
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.handlers import NodesHandler
from ktop.sources.live.listwatch import ListWatch
from ktop.sources.live.node_split import plan
from ktop.sources.live.reads import NODES, WATCHES
from ktop.sources.live.transport import KubeTransport
from tests.e2e.helpers import nodes

NO_RACK = "absent.example/rack"
FROM_ETCD = "apiserver_storage_list_fetched_objects_total"
"""Objects the apiserver read from etcd to serve lists (``apiserver_storage_list_total``
also counts the current-revision read of every consistent list served from the cache)."""


def expected_place(labels: dict[str, str]) -> tuple[str, str, str, bool]:
    """(region, zone, rack, excluded) from a node's labels, the legacy keys first."""

    def first(keys: tuple[str, ...]) -> str:
        return next((labels[k] for k in keys if labels.get(k)), "")

    return first(REGION_LABELS), first(ZONE_LABELS), "", EXCLUDE_DISRUPTION in labels


async def _listed(lab: Lab, split: bool) -> tuple[dict[str, NodeRecord], int, list[str]]:
    conn = await connect(str(lab.layout.kubeconfig), None, secrets=Secrets())
    try:
        meter = CostMeter()
        t = KubeTransport(conn.api, meter)
        resource = replace(next(r for r in WATCHES if r.path == NODES), page_size=20)
        selectors: list[str] = []

        def by_zone(items: list[dict[str, Any]]) -> Any:
            lists = plan(items, NO_RACK)
            selectors.extend(s.selector for s in lists or ())
            return lists

        handler = NodesHandler(NO_RACK, lambda name: None)
        lw = ListWatch(t, resource, handler, time.time, split=by_zone if split else None)
        events: list[Event] = []
        await lw.list_all(events.extend)
        assert lw.rv  # the watch has a version to start at
        records = {e.node.name: e.node for e in events if isinstance(e, NodeUpserted)}
        return records, meter.bytes_total, selectors
    finally:
        await conn.close()


def _nodes_read_from_etcd(lab: Lab) -> float:
    """Nodes the apiservers have read from etcd to serve lists (not from their caches)."""
    total = 0.0
    for a in lab.info["apiservers"]:
        status, body = http_get(f"{a['url']}/metrics", token=lab.info["admin_token"])
        assert status == 200
        parsed = parse_exposition(body.decode(), [FROM_ETCD])
        total += sum(s.value for s in parsed.samples if ("resource", "nodes") in s.labels)
    return total


async def test_the_split_list_reads_every_node_in_its_place(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole_nodes = await asyncio.to_thread(nodes, lab)  # its own event loop, in a thread
    truth = {n.metadata.name: expected_place(n.metadata.labels or {}) for n in whole_nodes}
    monkeypatch.setattr(list_plan, "ROWS_ONLY_PAGES", 1)  # zones bigger than a page of 20
    from_etcd = _nodes_read_from_etcd(lab)
    split, split_bytes, selectors = await _listed(lab, split=True)
    # every list came from a watch cache: the zone lists in one read each, the lists of
    # zones not yet known split again (the lab's node names sort by zone), no page
    # continued (other clients list nodes from their informers' caches)
    assert _nodes_read_from_etcd(lab) == from_etcd
    whole, whole_bytes, _ = await _listed(lab, split=False)
    assert selectors, "the lab's first page is plain: the split was taken"
    assert set(split) == set(truth) == set(whole)
    for name, place in truth.items():
        rec = split[name]
        assert (rec.region, rec.zone, rec.rack, rec.exclude_disruption) == place, name
        assert rec.ready == whole[name].ready and rec.zone == whole[name].zone
    assert split_bytes < whole_bytes
