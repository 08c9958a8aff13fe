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

import zstandard

from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record.format import FRAME_SIZE, Codec
from ktop.record.reader import Recording
from ktop.record.redact import Redactor
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings

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
            if (owner, field) in KEPT:
                return "kept"
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


def _file_text(path: Path) -> bytes:
    """Every frame of the file, decompressed, and the raw bytes."""
    out = [path.read_bytes()]
    with Recording(path) as rec:
        for h in rec.frames:
            raw = rec._bytes(h.offset + FRAME_SIZE, h.end)
            zstd = h.codec is Codec.ZSTD
            out.append(zstandard.ZstdDecompressor().decompress(raw) if zstd else raw)
    return b"".join(out)


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
    blob = _file_text(path)
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
