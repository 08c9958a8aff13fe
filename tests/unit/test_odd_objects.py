"""Odd but legal API objects read right; wrong-type fields skip one object, counted and shown."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_EVENTS,
    FEED_NODES,
    Area,
    Event,
    NodeUpserted,
    ObjectsSkipped,
    WarningEvent,
)
from ktop.sources.convert import ObjectError, node_record, parse_time, pending_pod_record
from ktop.sources.live.handlers import NodesHandler, WarningEventsHandler, table_node_record
from ktop.sources.live.listwatch import ListWatch, Resource
from ktop.sources.live.rows import Row
from ktop.sources.live.transport import Response


def test_json_null_is_empty_never_the_string_none() -> None:
    node = json.loads('{"metadata": {"name": "n1", "labels": null}, "spec": null, "status": null}')
    rec = node_record(node, "rack")
    assert rec.name == "n1" and rec.zone == "" and rec.rack == ""
    pod = json.loads(
        '{"metadata": {"name": "p", "namespace": null}, "spec": {"nodeName": null},'
        ' "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled",'
        ' "status": "False", "reason": "Unschedulable", "message": null}]}}'
    )
    prec = pending_pod_record(pod)
    assert prec is not None
    assert (prec.namespace, prec.node, prec.message) == ("", "", "")
    event = json.loads(
        '{"metadata": {"name": "e", "namespace": null}, "reason": "FailedScheduling",'
        ' "involvedObject": {"namespace": null, "name": "p", "kind": "Pod"},'
        ' "message": null, "count": null}'
    )
    (warning,) = WarningEventsHandler().upsert(0.0, Row(event))
    assert isinstance(warning, WarningEvent)
    assert (warning.namespace, warning.message, warning.count) == ("", "", 1)
    assert "None" not in repr(warning)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("false", False),
        ("False", False),
        (None, False),
    ],
)
def test_unschedulable_string_booleans(value: object, expected: bool) -> None:
    node = {"metadata": {"name": "n"}, "spec": {"unschedulable": value}}
    assert node_record(node, "rack").unschedulable is expected


def test_naive_timestamps_are_utc() -> None:
    expected = datetime(2024, 5, 1, 12, 0, tzinfo=UTC).timestamp()
    assert parse_time("2024-05-01T12:00:00") == expected
    assert parse_time("2024-05-01T12:00:00Z") == expected
    assert parse_time("2024-05-01T14:00:00+02:00") == expected
    assert parse_time("yesterday") is None


@pytest.mark.parametrize(
    "node",
    [
        {"metadata": ["not", "a", "mapping"]},
        {"metadata": {"name": "n", "labels": "zone=a"}},
        {"metadata": {"name": {"first": "n"}}},
        {"metadata": {"name": "n"}, "spec": {"unschedulable": "maybe"}},
        {"metadata": {"name": "n"}, "spec": {"taints": {"key": "x"}}},
        {"metadata": {"name": "n"}, "status": {"conditions": "Ready"}},
    ],
)
def test_wrong_types_are_object_errors(node: dict[str, Any]) -> None:
    with pytest.raises(ObjectError):
        node_record(node, "rack")


class _Pages:
    """Serves list pages as the apiserver would, for the pure list logic."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = json.dumps(body).encode()

    async def get(self, path: str, query: Sequence[Any], accept: str, timeout_s: float) -> Response:
        return Response(200, {}, self.body)


def _row(name: Any, labels: Any = None, status: str = "Ready") -> dict[str, Any]:
    return {"cells": [name, status], "object": {"metadata": {"name": name, "labels": labels}}}


async def test_a_bad_object_is_skipped_counted_and_shown() -> None:
    table = {
        "kind": "Table",
        "columnDefinitions": [{"name": "Name"}, {"name": "Status"}],
        "rows": [
            _row("good-1"),
            _row("bad", labels=["zone", "a"]),
            "not a row",
            _row("good-2", labels={"topology.kubernetes.io/zone": "z1"}),
        ],
        "metadata": {"resourceVersion": "7"},
    }
    lw = ListWatch(
        _Pages(table),  # type: ignore[arg-type]
        Resource(FEED_NODES, "/api/v1/nodes", "nodes", table=True),
        NodesHandler("rack", lambda name: None),
        lambda: 10.0,
    )
    batches: list[Sequence[Event]] = []
    await lw.list_all(batches.append)
    events = [e for batch in batches for e in batch]
    names = [e.node.name for e in events if isinstance(e, NodeUpserted)]
    assert names == ["good-1", "good-2"]
    skipped = [e for e in events if isinstance(e, ObjectsSkipped)]
    assert len(skipped) == 1 and skipped[0].skipped_total == 2
    model = ClusterModel()
    model.apply_all(events)
    snap = model.snapshot()
    notes = [f.note for f in snap.area_freshness(Area.NODES) if f.note]
    assert notes and notes[0].startswith("2 object(s) skipped")


def test_a_bad_watch_event_is_skipped_and_the_stream_goes_on() -> None:
    lw = ListWatch(
        None,  # type: ignore[arg-type]
        Resource(FEED_EVENTS, "/api/v1/events", "events"),
        WarningEventsHandler(),
        lambda: 5.0,
    )
    out: list[Sequence[Event]] = []
    bad = {"metadata": {"name": "e1"}, "reason": "FailedScheduling", "count": "many"}
    good = {"metadata": {"name": "e2"}, "reason": "FailedScheduling", "count": 3}
    lw._on_event({"type": "ADDED", "object": bad}, out.append)
    lw._on_event({"type": "ADDED", "object": good}, out.append)
    events = [e for batch in out for e in batch]
    assert [type(e).__name__ for e in events] == ["ObjectsSkipped", "WarningEvent"]
    assert lw.skipped == 1


def test_table_node_with_null_labels() -> None:
    rec = table_node_record({"metadata": {"name": "n", "labels": None}, "cells": None}, "rack")
    assert rec.name == "n" and rec.zone == ""


def test_a_duplicated_series_does_not_double_the_rate_and_is_shown() -> None:
    from ktop.model.events import Component, MetricsScraped, Target
    from ktop.model.exposition import parse_exposition
    from ktop.ui.render.reasons import drill_reason_lines

    target = Target(Component.APISERVER, "a:6443")
    model = ClusterModel()
    for at, value in ((0.0, 100.0), (10.0, 150.0)):
        line = f'apiserver_request_total{{verb="GET",code="200"}} {value}\n'
        parsed = parse_exposition(line + line, {"apiserver_request_total"})
        model.apply(MetricsScraped(at, target, parsed.samples, parsed.errors))
    rate = model.series[target].rate("apiserver_request_total")
    assert rate.value == 5.0  # (150 - 100) / 10 s, not twice that
    lines = [t.plain for t in drill_reason_lines(model.snapshot(), Area.APISERVERS)]
    assert any("warning" in ln and "duplicate series" in ln for ln in lines), lines


def test_a_nameless_node_is_never_fetched_whole() -> None:
    from ktop.sources.live.node_details import NodeDetails

    details = NodeDetails(per_s=5.0, cap=10)
    details.want("")
    details.want("n1")
    assert details.queue.qsize() == 1 and details.pending == {"n1"}


SCHEDULER_POD = {
    "metadata": {"name": "kube-scheduler-cp1"},
    "spec": {
        "nodeName": "cp1",
        "containers": [{"command": ["kube-scheduler", "--bind-address=10.0.0.5"]}],
    },
    "status": {"phase": "Running"},
}


def test_discovery_reads_null_as_empty_and_skips_wrong_types() -> None:
    from ktop.sources.live.discovery import prometheus_address

    services = json.loads(
        '[{"metadata": {"namespace": null, "name": "bad"}, "spec": "oops"},'
        ' {"metadata": ["not", "a", "mapping"]},'
        ' {"metadata": {"namespace": "mon", "name": "prom"},'
        '  "spec": {"ports": [{"name": null}, {"name": "web"}]}}]'
    )
    assert prometheus_address(services, ("web",)) == "k8s://mon/prom:web"
    nameless = json.loads('[{"metadata": {"namespace": "m", "name": null},'
                          ' "spec": {"ports": [{"name": "web"}]}}]')  # fmt: skip
    assert prometheus_address(nameless, ("web",)) == "k8s://m/:web"


async def test_apf_names_skip_wrong_types_and_never_say_none() -> None:
    from ktop.sources.live.cost import CostMeter
    from ktop.sources.live.discovery import apf_object_names
    from ktop.sources.live.transport import KubeTransport
    from tests.unit.fake_kube import Answer, Call, FakeApi

    def route(c: Call) -> Answer:
        return Answer(
            body={
                "items": [
                    {"metadata": {"uid": "u1", "name": None}},
                    {"metadata": "oops"},
                    {"metadata": {"uid": "u2", "name": ["x"]}},
                    {"metadata": {"uid": "u3", "name": "global"}},
                ],
                "metadata": None,
            }
        )

    t = KubeTransport(FakeApi(route), CostMeter())  # type: ignore[arg-type]
    assert await apf_object_names(t) == {"u1": "", "u3": "global"}


def test_static_pod_nulls_are_empty_and_wrong_types_are_reasons() -> None:
    from ktop.model.events import Component
    from ktop.sources.live.static_pods import (
        STATIC_COMPONENTS,
        _target,
        leader_node,
        leader_pod,
        proxy_target,
    )

    spec = next(s for s in STATIC_COMPONENTS if s.component is Component.SCHEDULER)
    assert leader_node({"spec": {"holderIdentity": None}}) == ""
    assert leader_node({"spec": None}) == ""
    with pytest.raises(ObjectError):
        leader_node({"spec": "oops"})
    nulls = json.loads('{"metadata": {"name": null}, "spec": {"nodeName": null}}')
    assert leader_pod([nulls, SCHEDULER_POD], "cp1") is SCHEDULER_POD
    null_phase = {**SCHEDULER_POD, "status": {"phase": None}}
    target = proxy_target(spec, null_phase)
    assert (target.pod, target.reason) == ("kube-scheduler-cp1", "")
    assert "None" not in target.path
    listed = {**SCHEDULER_POD, "metadata": ["kube-scheduler-cp1"]}
    bad = _target(spec, listed)
    assert bad.path == "" and "metadata is list" in bad.reason
    port = {**SCHEDULER_POD, "spec": {"containers": [{"command": ["--secure-port=x"]}]}}
    assert "not a port number" in proxy_target(spec, port).reason


def test_a_bundle_skips_and_reports_a_bad_object_and_reads_the_rest(tmp_path: Any) -> None:
    from ktop.model.events import ApiserverIdentities, LeaseRenewed
    from ktop.sources.bundle.reader import read_bundle
    from tests.unit.bundles import T0, lease, write_list

    identity = {
        "metadata": {
            "name": None,
            "namespace": "kube-system",
            "labels": {"apiserver.kubernetes.io/identity": "kube-apiserver"},
        }
    }
    bad = {"metadata": {"name": "n2", "namespace": "kube-node-lease"}, "spec": "oops"}
    write_list(tmp_path, "leases", "LeaseList", [lease("n1", T0), bad, identity])
    read = read_bundle(tmp_path)
    renewed = [e.node for e in read.events if isinstance(e, LeaseRenewed)]
    assert renewed == ["n1"]
    ids = [e.identities for e in read.events if isinstance(e, ApiserverIdentities)]
    assert ids == [("",)]
    assert [str(e) for e in read.errors if "leases" in e.file] == [
        "api/leases.json: items[1] skipped: ObjectError: spec is str, not an object"
    ]
    skipped = [e for e in read.events if isinstance(e, ObjectsSkipped)]
    assert skipped and all(e.skipped_total == 1 for e in skipped)
