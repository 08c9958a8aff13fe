"""Repeated scrapes are written as their values only (format version 2), and read back."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import msgpack
import pytest

from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.record.codec import SCRAPE_VALUES, ChunkDecoder
from ktop.record.format import FORMAT_VERSION, PREAMBLE
from ktop.record.payload import stream as _stream
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.record.strict import RecordError
from ktop.record.writer import WriterSettings
from ktop.sources.sim.simulator import Simulator

SETTINGS = WriterSettings(chunk_s=20.0, keyframe_s=45.0)


def _record(path: Path, *, seconds: int = 100, values_only: bool = True) -> list[ev.Event]:
    sim = Simulator("zone-outage", nodes=60, zones=3)
    hub = Hub(ClusterModel())
    rec = Recorder(str(path), hub.model, source={"kind": "demo", "context": "zone-outage"})
    assert rec._writer is not None
    rec._writer.settings = SETTINGS
    rec._writer._encoder.scrape_values = values_only
    hub.add_sink(rec)
    events = list(sim.start())
    hub.ingest(events)
    for _ in range(seconds):
        batch = sim.advance(1.0)
        events += batch
        hub.ingest(batch)
    rec.stop()
    return events


def _played(rec: Recording) -> list[ev.Event]:
    cur = rec.cursor(rec.start - 1.0)
    return cur.take(rec.end)


def test_a_repeated_scrape_is_its_values_only_and_reads_back_equal(tmp_path: Path) -> None:
    events = _record(tmp_path / "r.ktrec")
    scrapes = [e for e in events if isinstance(e, ev.MetricsScraped)]
    with Recording(tmp_path / "r.ktrec") as rec:
        assert rec.version == FORMAT_VERSION >= 2
        tags = [r[0] for h in rec.chunks for r in _stream(rec._payload(h))]
        played = _played(rec)
    # Each chunk writes each target's first scrape whole, the others as values.
    targets = {e.target for e in scrapes}
    whole = tags.count("MetricsScraped")
    assert whole <= len(targets) * len(rec.chunks)
    assert whole + tags.count(SCRAPE_VALUES) == len(scrapes)
    assert tags.count(SCRAPE_VALUES) > len(scrapes) / 2
    assert played == events
    # A value written as an integer (it was integral) is read back as a float.
    got = [s for e in played if isinstance(e, ev.MetricsScraped) for s in e.samples]
    assert got and all(type(s.value) is float for s in got)


def test_a_version_1_recording_still_replays_the_same(tmp_path: Path) -> None:
    v1 = tmp_path / "v1.ktrec"
    events = _record(v1, values_only=False)
    data = bytearray(v1.read_bytes())
    struct.pack_into("<H", data, 8, 1)  # as a ktop before format 2 wrote it
    v1.write_bytes(bytes(data))
    assert len(data) > PREAMBLE.size
    v2 = tmp_path / "v2.ktrec"
    _record(v2)
    with Recording(v1) as old, Recording(v2) as new:
        assert old.version == 1 and new.version == FORMAT_VERSION
        tags = [r[0] for h in old.chunks for r in _stream(old._payload(h))]
        assert SCRAPE_VALUES not in tags
        assert _played(old) == events == _played(new)
        for at in (old.start + 30.5, old.start + 77.0):
            a, b = old.cursor(at).model.snapshot(), new.cursor(at).model.snapshot()
            assert a == b, at
        assert v2.stat().st_size < v1.stat().st_size


def _scrape(values: list[Any], target: list[str] | None = None) -> list[Any]:
    return [SCRAPE_VALUES, 1767225610.5, target or ["etcd", "etcd-0:2379"], values]


FIRST = [
    "MetricsScraped",
    1767225605.5,
    ["etcd", "etcd-0:2379"],
    [["etcd_server_has_leader", [], 1], ["etcd_mvcc_db_total_size_in_bytes", [], 2.5]],
    [],
]


def test_values_follow_the_targets_previous_layout() -> None:
    dec = ChunkDecoder({})
    first = list(dec.decode(FIRST))
    again = list(dec.decode(_scrape([0, 7.25])))
    assert len(first) == len(again) == 1
    assert isinstance(again[0], ev.MetricsScraped)
    assert again[0] == ev.MetricsScraped(
        1767225610.5,
        ev.Target(ev.Component.ETCD, "etcd-0:2379"),
        (
            ev.Sample("etcd_server_has_leader", (), 0.0),
            ev.Sample("etcd_mvcc_db_total_size_in_bytes", (), 7.25),
        ),
    )
    dec.new_chunk()  # a chunk stands alone: the layout is written again in it
    with pytest.raises(RecordError, match="expected an earlier scrape of etcd"):
        list(dec.decode(_scrape([0, 7.25])))


@pytest.mark.parametrize(
    ("record", "why"),
    [
        (_scrape([1]), "expected 2 values (the earlier scrape's), got 1"),
        (_scrape([1, "2"]), "values: expected a number, got a string"),
        (_scrape([1, True]), "values: expected a number, got a boolean"),
        (_scrape([1, 2], ["etcd", "etcd-9:2379"]), "expected an earlier scrape of etcd"),
        (_scrape([1, 2], ["kubelet", "x"]), "expected one of"),
        ([SCRAPE_VALUES, float("nan"), ["etcd", "etcd-0:2379"], [1, 2]], "at: expected a time"),
        ([SCRAPE_VALUES, 1767225610.5, ["etcd", "etcd-0:2379"], 5], "values: an array"),
        ([SCRAPE_VALUES, 1767225610.5], "expected [tag, at, target, values]"),
    ],
)
def test_a_values_record_that_does_not_fit_is_refused(record: list[Any], why: str) -> None:
    dec = ChunkDecoder({})
    list(dec.decode(FIRST))
    packed = msgpack.unpackb(msgpack.packb(record), strict_map_key=False)
    with pytest.raises(RecordError) as err:
        list(dec.decode(packed))
    assert why in str(err.value)
