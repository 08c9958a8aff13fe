"""Keyframes as columns (format version 3, model state version 2) read back exactly, old
keyframes still read, and a seek's shortcuts (only each Lease's last renewal stored, a
keyframe's nodes counted at once) reach the state folding every event one at a time does.
"""

from __future__ import annotations

import math
import random
import struct
from array import array
from pathlib import Path
from typing import Any

import msgpack
import pytest

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.state import export_state, import_state
from ktop.model.state_columns import (
    node_records,
    nodes_out,
    pack_doubles,
    unpack_doubles,
)
from ktop.record.codec import ChunkDecoder, LeaseRun
from ktop.record.cursor import Cursor
from ktop.record.payload import DECODE_ERRORS
from ktop.record.payload import stream as _stream
from ktop.record.reader import Recording
from ktop.record.strict import RecordError
from ktop.record.writer import RecordingWriter, WriterSettings
from tests.unit.test_seek_bulk import _model_state

T0 = 1767225600.0
SHIPPED = Path(__file__).resolve().parents[2] / "recordings"
TARGET = ev.Target(ev.Component.ETCD, "etcd-0:2379")


def _bits(values: list[float]) -> bytes:
    return array("d", values).tobytes()


def _node(rng: random.Random, name: str) -> ev.NodeRecord:
    ready = rng.choice(
        [ev.Readiness.TRUE, ev.Readiness.TRUE, ev.Readiness.FALSE, ev.Readiness.UNKNOWN]
    )
    return ev.NodeRecord(
        name,
        rng.choice(["r1", "r2"]),
        rng.choice(["z1", "z2", "z3"]),
        rng.choice(["k1", "k2", ""]),
        ready,
        None if rng.random() < 0.3 else rng.choice([float(rng.randrange(10**9)), 1.5, -0.0]),
        rng.random() < 0.2,
        rng.random() < 0.2,
        rng.random() < 0.2,
        rng.random() < 0.2,
    )


def test_packed_doubles_read_back_bit_for_bit() -> None:
    rng = random.Random(1)
    values = [rng.uniform(-1e300, 1e300) for _ in range(50)]
    values += [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1e16, 1.0]
    values.append(struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_0000_0ABC))[0])  # a payload
    assert _bits(unpack_doubles(pack_doubles(values)).tolist()) == _bits(values)
    assert unpack_doubles(pack_doubles([])).tolist() == []
    for bad in (b"1234567", "12345678", [1.0]):
        with pytest.raises(ValueError, match="packed doubles"):
            unpack_doubles(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(4))
def test_a_state_as_columns_reads_back_exactly(seed: int) -> None:
    """Every series point bit for bit (NaN, -0.0), every node field, the Leases in their
    order, with and without a node."""
    rng = random.Random(seed)
    model = ClusterModel()
    nodes = [_node(rng, f"n{i:02d}") for i in range(30)]
    model.apply_all([ev.NodeUpserted(T0, n) for n in nodes])
    renewed = [n.name for n in nodes if rng.random() < 0.8] + ["lease-without-node"]
    rng.shuffle(renewed)  # not the nodes' order
    model.apply_all([ev.LeaseRenewed(T0 + 1, name, T0 + rng.random()) for name in renewed])
    odd = [math.nan, -0.0, 0.1, 1e16, 1.0, 0.7, -math.inf, 3.0]
    for k in range(12):
        samples = (
            ev.Sample("etcd_server_has_leader", (), 1.0),
            ev.Sample("etcd_mvcc_db_total_size_in_bytes", (), float(1000 + 7 * k)),
            ev.Sample("etcd_server_leader_changes_seen_total", (), odd[k % len(odd)]),
        )
        model.apply(ev.MetricsScraped(T0 + 5 * k, TARGET, samples))
    state = msgpack.unpackb(msgpack.packb(export_state(model)), strict_map_key=False)
    assert state["version"] == 2
    copy = import_state(state)
    assert list(copy.nodes.nodes.items()) == list(model.nodes.nodes.items())
    assert list(copy.nodes.leases.items()) == list(model.nodes.leases.items())
    assert list(copy.nodes.counts.items()) == list(model.nodes.counts.items())
    assert copy.nodes.unhealthy == model.nodes.unhealthy
    got, want = copy.series[TARGET], model.series[TARGET]
    assert (got.last_at, got.scrapes) == (want.last_at, want.scrapes)
    for name, by_labels in want._series.items():
        for labels, points in by_labels.items():
            mine = got._series[name][labels]
            assert mine.times == points.times
            assert _bits(mine.values) == _bits(points.values), name
    assert copy.snapshot().nodes == model.snapshot().nodes
    assert export_state(copy) == export_state(model)  # NaN only packed: compared as bytes


def test_a_keyframe_whose_lease_names_are_the_node_names_does_not_repeat_them() -> None:
    model = ClusterModel()
    model.apply_all([ev.NodeUpserted(T0, _node(random.Random(2), f"n{i}")) for i in range(5)])
    model.apply_all([ev.LeaseRenewed(T0, f"n{i}", T0) for i in range(5)])
    assert nodes_out(model.nodes)["lease_names"] is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("domain", [0, -1, 0]),
        ("domain", [0, 7, 0]),
        ("flags", [0, 16, 0]),
        ("flags", [0, 1.5, 0]),
        ("since_none", [-1]),
        ("ready", ["True", "Maybe", "True"]),
        ("names", ["a", 2, "c"]),
        ("domains", [["r", "z"]]),
        ("since", b"\x00" * 8),
    ],
)
def test_a_crafted_nodes_section_is_refused_not_misread(key: str, value: Any) -> None:
    section = nodes_out(ClusterModel().nodes)
    section.update(
        names=["a", "b", "c"],
        domains=[["r", "z", "k"]],
        domain=[0, 0, 0],
        ready=["True"] * 3,
        since=pack_doubles([0.0] * 3),
        since_none=[],
        flags=[0, 1, 15],
    )
    assert [n.name for n in node_records(section)] == ["a", "b", "c"]
    section[key] = value
    with pytest.raises(DECODE_ERRORS):
        node_records(section)


def test_bad_name_references_are_refused_and_take_nothing_back() -> None:
    dec = ChunkDecoder({})
    dec.new_chunk()
    assert dec._names(["a", "b", "c"]) == ["a", "b", "c"]
    assert dec._names([2, 2, 2]) == ["b", "c", "b"]  # into the run itself
    for bad in ([2, 2.5], [2, 99], [3, True], [2, 0], [2, "x", -1]):
        before = list(dec.names)
        with pytest.raises(RecordError, match="a reference 1-"):
            dec._names(bad)
        del dec.names[len(before) :]  # as a lost chunk leaves it: the next chunk starts anew
        assert dec.names == before


def test_a_packed_run_makes_its_times_only_when_asked() -> None:
    first = 1_767_225_600_123_456
    run = LeaseRun.packed(["a", "b", "a"], first, [5, 65535])
    assert run.earliest == first / 1e6 and run.latest == (first + 65540) / 1e6
    assert run.last == run.latest and run.at == run.earliest
    assert run._renews is None
    assert run.renews == [first / 1e6, (first + 5) / 1e6, (first + 65540) / 1e6]
    assert run.ats == run.renews
    far = 2**60  # beyond a double's exact integers: summed as integers
    assert list(LeaseRun.packed(["a", "b"], far, [1]).renew_micros()) == [far, far + 1]


def _lease_script(seed: int) -> list[list[ev.Event]]:
    """A minute of batches: Leases renewing several times each (packed runs), a node
    changing and then deleted with renewals before and after, a new node and a Lease
    without one, a renewal written whole, a scrape with parse errors, and sampling begun.
    """
    rng = random.Random(seed)
    names = [f"n{i:02d}" for i in range(12)]
    nodes = {name: _node(rng, name) for name in names}
    batches: list[list[ev.Event]] = [[ev.NodeUpserted(T0, n) for n in nodes.values()]]
    sampled = False
    for s in range(1, 61):
        t = T0 + s
        batch: list[ev.Event] = []
        if s == 20:
            batch.append(ev.NodeUpserted(t, _node(rng, "n03")))
        if s == 25:
            batch.append(ev.NodeDeleted(t, "n03"))
        if s == 30:
            batch.append(ev.NodeUpserted(t, _node(rng, "n99")))
            names.append("n99")
        if s == 33:
            batch.append(ev.LeaseRenewed(t, "n05", t - 0.1234567))  # not whole microseconds
        if s == 37:
            bad = (ev.Sample("etcd_server_has_leader", (), 1.0),)
            batch.append(ev.MetricsScraped(t, TARGET, bad, ("line 3: bad",)))
        if s == 45 and seed % 2:
            batch.append(ev.LeasesSampled(t, 4, 10.0))
            sampled = True
        for _ in range(rng.randrange(0, 12)):  # several renewals of the same Leases
            name = rng.choice([*names, "lease-without-node"])
            us = round((t + rng.random() * 0.9) * 1e6)
            seen = us / 1e6 if not sampled else us / 1e6 + rng.random()
            batch.append(ev.LeaseRenewed(seen, name, us / 1e6))
        batch.sort(key=lambda e: e.at)
        batch.append(ev.ClockTick(t + 0.95))
        batches.append(batch)
    return batches


@pytest.mark.parametrize("seed", range(6))
def test_a_seek_stores_the_last_renewals_as_renewals_one_by_one_do(
    tmp_path: Path, seed: int
) -> None:
    path = tmp_path / "leases.ktrec"
    model = ClusterModel()
    writer = RecordingWriter(str(path), model, source={}, settings=WriterSettings(15.0, 1e9))
    for batch in _lease_script(seed):
        model.apply_all(batch)
        writer.append(batch)
    writer.close()
    with Recording(path) as rec:
        tags = {r[0] for h in rec.chunks for r in _stream(rec._payload(h))}
        assert {"~L", "LeaseRenewed", "NodeDeleted"} <= tags
        rng = random.Random(seed)
        for at in [rec.end, *(rng.uniform(rec.start, rec.end) for _ in range(12))]:
            sought = rec.cursor(at)
            key = [k for k in rec.keyframes if k.first <= at][-1]
            start = rec._import(key)
            assert start is not None
            one = Cursor(rec, start, rec.frames.index(key) + 1)
            one.advance(at)
            assert sought.folded == one.folded
            assert _model_state(sought.model) == _model_state(one.model), at - rec.start
            assert sought.model.snapshot() == one.model.snapshot()
        assert _model_state(rec.cursor(rec.end).model) == _model_state(model)


def test_a_recording_of_format_2_still_seeks_to_the_played_state() -> None:
    """The shipped recordings were written before format 3: their keyframes are state
    version 1, read as they were written."""
    path = SHIPPED / "steady.ktrec"
    with Recording(path) as rec:
        assert rec.version == 2
        body = msgpack.unpackb(rec._payload(rec.keyframes[-1]), strict_map_key=False)
        assert body["state"]["version"] == 1
        played = rec.cursor(rec.start - 1.0)
        for at in (rec.start + 50.5, rec.start + 200.0, rec.end):
            played.advance(at)
            sought = rec.cursor(at)
            key = [k for k in rec.keyframes if k.first <= at][-1]
            start = rec._import(key)
            assert start is not None
            one = Cursor(rec, start, rec.frames.index(key) + 1)
            one.advance(at)
            assert _model_state(sought.model) == _model_state(one.model), at
            assert sought.model.snapshot() == one.model.snapshot()
            assert sought.model.snapshot().nodes == played.model.snapshot().nodes, at
