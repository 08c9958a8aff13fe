"""``--redact``: every event type, driven through a recording, leaves no planted name behind.

The events are built from the event classes themselves (every type of
``ktop.model.events.Event``), so a new event type, or a new field, that the
redactor does not handle fails here. String fields get planted names unless
they are listed in ``KEPT`` (values triage groups by, which redaction keeps on
purpose); free-text fields get sentences that name nodes, pods, namespaces,
the context and server addresses.
"""

from __future__ import annotations

import dataclasses
import itertools
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any

from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record.reader import Recording
from ktop.record.redact import Redactor
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from tests.unit.redact_plant import file_bytes

KEPT = {
    ("WarningEvent", "reason"),
    ("WarningEvent", "object_kind"),
    ("SourceStarted", "kind"),
    ("FeedSynced", "feed"),
    ("FeedFailed", "feed"),
    ("ObjectsSkipped", "feed"),
    ("NodeRecord", "region"),
    ("NodeRecord", "zone"),
    ("NodeRecord", "rack"),
    ("ApfLevelDump", "priority_level"),
    ("SelfCost", "priority_level"),
    ("SelfCost", "flow_schema"),
    ("NodeReadinessByLabel", "label"),
    ("Sample", "name"),
}
"""String fields redaction keeps: zones, racks, reasons, kinds, levels, metric names."""
TEXT = {"reason", "message", "detail", "example", "why", "parse_errors"}
"""Free-text fields: they get sentences naming things."""

CONTEXT = "prod-eu-admin@corp-secret"
NODE_IN_TEXT = "worker-never-seen-7"
POD_IN_TEXT = ("team-hidden", "web-hidden-1")
# Fields whose structure a plain string cannot stand for.
SPECIAL: dict[tuple[str, str], Any] = {
    ("Sample", "labels"): (("endpoint", "https://10.77.0.1:2379"), ("verb", "GET")),
    ("QuotaRecord", "items"): (("requests.cpu", 1.0, 2.0),),
    ("NodeReadinessByLabel", "rows"): (("zone-a", 3, 1),),
    ("HistoryBackfilled", "series"): (
        ("api.requests_per_s|10.66.0.1:6443", ((1.0, 2.0),)),
        ("etcd.fsync_p99_s|etcd-secret-0:2379", ((1.0, 0.01),)),
        (f"sched.reason_pods|0/3 nodes are available: node {NODE_IN_TEXT}", ((1.0, 4.0),)),
        ("nodes.unhealthy|zone-a", ((1.0, 0.0),)),
    ),
}
SECRETS_IN_SPECIAL = ["10.77.0.1", "10.66.0.1", "etcd-secret-0"]


class Planter:
    """Builds an instance of any event class with a planted name in every string field."""

    def __init__(self) -> None:
        self.secrets: list[str] = [CONTEXT, NODE_IN_TEXT, *POD_IN_TEXT, *SECRETS_IN_SPECIAL]
        self._n = itertools.count(1)

    def _secret(self, owner: str, field: str) -> str:
        n = next(self._n)
        value = f"{field.replace('_', '')}-secret{n}.corp.example"
        self.secrets.append(value)
        return value

    def _text(self) -> str:
        n = next(self._n)
        addr, host = f"10.55.{n}.9:6443", f"https://api{n}.secret.example:443"
        self.secrets += [f"10.55.{n}.9", f"api{n}.secret.example"]
        ns, pod = POD_IN_TEXT
        return f"node {NODE_IN_TEXT} and pod {ns}/{pod} failed via {addr} ({host}) in {CONTEXT}"

    def value(self, tp: Any, owner: str, field: str) -> Any:
        """A value of type ``tp`` for ``owner.field``."""
        if (owner, field) in SPECIAL:
            return SPECIAL[owner, field]
        origin = typing.get_origin(tp)
        if origin in (typing.Union, types.UnionType):
            arg = next(a for a in typing.get_args(tp) if a is not type(None))
            return self.value(arg, owner, field)
        if origin is tuple:
            args = typing.get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                return (self.value(args[0], owner, field),)
            return tuple(self.value(a, owner, field) for a in args)
        if tp is str:
            if (owner, field) in KEPT:  # kept, but an address in it is still replaced
                n = next(self._n)
                self.secrets.append(f"10.44.{n}.7")
                return f"kept-10.44.{n}.7"
            return self._text() if field in TEXT else self._secret(owner, field)
        if tp is bool:
            return False
        if tp is int:
            return 1
        if tp is float:
            return 1.0
        if isinstance(tp, type) and issubclass(tp, Enum):
            return next(iter(tp))
        if dataclasses.is_dataclass(tp):
            return self.build(typing.cast(type[Any], tp))
        raise AssertionError(f"no planted value for {owner}.{field}: {tp!r}")

    def build(self, cls: type[Any]) -> Any:
        """An instance of ``cls`` with planted values."""
        hints = typing.get_type_hints(cls, vars(ev))
        kwargs = {
            f.name: 10.0 if f.name == "at" else self.value(hints[f.name], cls.__name__, f.name)
            for f in dataclasses.fields(cls)
        }
        return cls(**kwargs)


def test_every_event_type_is_redacted_in_the_whole_file(tmp_path: Path) -> None:
    planter = Planter()
    types_ = typing.get_args(ev.Event)
    assert len(types_) >= 24
    events = [planter.build(cls) for cls in types_]
    path = tmp_path / "red.ktrec"
    hub = Hub(ClusterModel())
    source = {"kind": "live", "context": CONTEXT, "detail": "https://api.detail-secret.example"}
    planter.secrets.append("api.detail-secret.example")
    recorder = Recorder(
        str(path),
        hub.model,
        source=source,
        redact=True,
        settings=WriterSettings(chunk_s=0.0, keyframe_s=0.0),  # a keyframe after every batch
    )
    hub.add_sink(recorder)
    for e in events:
        hub.ingest([e])
    recorder.mark(f"node {NODE_IN_TEXT} went away")
    recorder.stop()
    blob = file_bytes(path)
    leaked = [s for s in planter.secrets if s.encode() in blob]
    assert leaked == []
    with Recording(path) as rec:
        assert rec.header["redacted"] is True
        assert rec.header["context"] == rec.header["source"]["context"] == "context-1"
        assert len(rec.keyframes) > len(types_) // 2
        got = [type(e) for e in rec.cursor(0.0).take(rec.end)]
    assert set(got) == set(types_)  # every type was written (redacted, not dropped)


def test_names_in_free_text_are_replaced_before_they_are_seen_and_stay_consistent() -> None:
    r = Redactor()
    msg = r.text("0/3 nodes are available: node worker-7 has taint, pod team-a/web-1 waits")
    assert "worker-7" not in msg and "team-a" not in msg and "web-1" not in msg
    assert "nodes are available" in msg  # ordinary words stay
    assert r.stand_in("node", "worker-7") in msg
    upserted = r.event(ev.NodeDeleted(1.0, "worker-7"))
    assert isinstance(upserted, ev.NodeDeleted) and upserted.name in msg


APISERVER_FIXTURE = Path(__file__).parents[1] / "fixtures/nri-k8s-1.35_kube-apiserver_metrics.prom"
PLANTED_LABELS = (("host_ip", "10.66.77.3"), ("created_by_name", "origdeploy-api-5d4f9c"))
"""Labels the model never reads, as kube-state-metrics or a relabelling adds them."""


def _apiserver_scrape(at: float, instance: str) -> ev.MetricsScraped:
    from ktop.model.exposition import parse_exposition
    from ktop.model.wanted import FAMILIES

    component = ev.Component.APISERVER
    parsed = parse_exposition(APISERVER_FIXTURE.read_text(), FAMILIES[component])
    samples = tuple(
        ev.Sample(s.name, (*s.labels, *PLANTED_LABELS), s.value) for s in parsed.samples
    )
    return ev.MetricsScraped(at, ev.Target(component, instance), samples)


def test_metric_labels_the_model_never_reads_are_dropped_and_the_numbers_stay() -> None:
    # A real apiserver scrape with addresses and owner names in extra labels: the redacted
    # samples hold none of them, and a model fed the redacted scrapes shows the same numbers
    # as one fed the originals (the model drops those labels too, summing what they split).
    red = Redactor()
    originals = [_apiserver_scrape(t, "10.66.0.9:6443") for t in (100.0, 130.0)]
    redacted = [red.event(e) for e in originals]
    text = repr(redacted)
    for _, value in (*PLANTED_LABELS, ("instance", "10.66.0.9")):
        assert value not in text
    plain, shadow = ClusterModel(), ClusterModel()
    plain.apply_all(originals)
    shadow.apply_all(redacted)
    a, b = plain.snapshot().apiservers, shadow.snapshot().apiservers
    assert len(a.instances) == len(b.instances) == 1
    got, want = b.instances[0], a.instances[0]
    assert got.instance == "server-1"
    assert dataclasses.replace(got, instance=want.instance) == want


def test_a_redacted_copy_hides_ips_owner_names_and_names_met_only_later(tmp_path: Path) -> None:
    from ktop.cli import main

    owner, pod = "origdeploy-api-5d4f9c", "origdeploy-api-5d4f9c-x7k2p"
    early = ev.WarningEvent(
        5.0, "FailedCreate", "prod-ns", "ReplicaSet", owner, f"{owner} of origdeploy-api failed"
    )
    events: list[ev.Event] = [
        early,
        ev.NodeUpserted(6.0, ev.NodeRecord("10.66.77.5", "r", "z", "k", ev.Readiness.FALSE, 1.0)),
        ev.LeaseRenewed(6.0, "10.66.77.5", 2.0),
        ev.PendingPodUpserted(
            7.0, ev.PendingPodRecord("prod-ns", pod, 1.0, ev.PodWait.UNSCHEDULABLE)
        ),
        _apiserver_scrape(8.0, "10.66.77.8:6443"),
    ]
    orig = tmp_path / "orig.ktrec"
    hub = Hub(ClusterModel())
    rec = Recorder(str(orig), hub.model, source={"kind": "live", "context": CONTEXT})
    hub.add_sink(rec)
    for e in events:
        hub.ingest([e])
    rec.mark(f"pod {pod} on 10.66.77.9 stuck")
    rec.stop()
    copy = tmp_path / "copy.ktrec"
    assert main(["record", "-o", str(copy), "--from", str(orig), "--redact"]) == 0
    blob = file_bytes(copy)
    planted = [owner, "origdeploy-api", pod, "prod-ns", CONTEXT, "10.66.77.", "10.66.77.3"]
    assert [s for s in planted if s.encode() in blob] == []
    with Recording(copy) as got:
        warning = next(e for e in got.cursor(0.0).take(got.end) if isinstance(e, ev.WarningEvent))
        assert got.markers and "pod pod-1 on server-" in got.markers[0].note
    # The message written before the pod was seen names its owners by their stand-ins, the
    # ReplicaSet by the same stand-in as the event's object.
    assert warning.object_name.startswith("owner-")
    assert warning.message.startswith(f"{warning.object_name} of owner-")


def test_bare_addresses_go_and_versions_numbers_and_public_groups_stay() -> None:
    r = Redactor()
    out = r.text("dial 10.66.77.3 failed; v1.35.0-gke.12 at 0.005 s, flowcontrol.apiserver.k8s.io")
    assert "10.66.77.3" not in out and "server-1" in out
    assert "v1.35.0-gke.12" in out and "0.005" in out and "flowcontrol.apiserver.k8s.io" in out
    assert r.text("db.prod.corp.example:2379 down") == "server-2 down"
