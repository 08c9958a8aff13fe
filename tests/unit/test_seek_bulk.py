"""A seek folds a target's scrapes in bulk and imports a keyframe's nodes in bulk: the
state it reaches is the one folding the same events one at a time reaches.

Expected values always come from the one-at-a-time path (``ClusterModel.apply``,
``NodesState.upsert``, ``from_plain``), on the simulator's own events.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ktop.hub import Hub
from ktop.model import events as ev
from ktop.model.area_nodes import NodesState
from ktop.model.cluster import ClusterModel
from ktop.model.model_inputs import ModelConfig
from ktop.model.plaindata import from_plain, to_plain
from ktop.model.series import ScrapeRun, TargetSeries
from ktop.model.series_window import IDENTITY
from ktop.model.slo import SLI_FAMILIES
from ktop.model.state import _node_records, export_state
from ktop.record.cursor import Cursor
from ktop.record.reader import Recording
from ktop.record.session import Recorder
from ktop.record.writer import WriterSettings
from ktop.sources.sim.simulator import Simulator

LB = ev.Target(ev.Component.APISERVER, ev.LOAD_BALANCED)
SLI_BUCKET = SLI_FAMILIES[0] + "_bucket"


def _sim_events(seconds: int, scenario: str = "zone-outage") -> list[ev.Event]:
    sim = Simulator(scenario, nodes=60, zones=3, seed=3)
    events = list(sim.start())
    for _ in range(seconds):
        events += sim.advance(1.0)
    return events


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three minutes of the simulator, chunks of 20 s, keyframes every 45 s."""
    path = tmp_path_factory.mktemp("seek") / "r.ktrec"
    sim = Simulator("zone-outage", nodes=60, zones=3, seed=3)
    hub = Hub(ClusterModel())
    rec = Recorder(str(path), hub.model, source={"kind": "demo", "context": "zone-outage"})
    assert rec._writer is not None
    rec._writer.settings = WriterSettings(chunk_s=20.0, keyframe_s=45.0)
    hub.add_sink(rec)
    hub.ingest(sim.start())
    for _ in range(180):
        hub.ingest(sim.advance(1.0))
    rec.stop()
    return path


def _series_state(ts: TargetSeries) -> Any:
    """Everything a target's series hold, in their order."""
    return (
        ts.last_at,
        ts.scrapes,
        [
            (name, [(labels, list(s.points)) for labels, s in by_labels.items()])
            for name, by_labels in ts._series.items()
        ],
    )


def _model_state(m: ClusterModel) -> Any:
    return (
        export_state(m),
        [(t, _series_state(ts)) for t, ts in m.series.items()],
        list(m.slo_budgets.items()),
        m.now,
    )


@pytest.mark.parametrize("window_s", [300.0, 20.0])
def test_a_seek_reaches_the_state_folding_one_event_at_a_time_reaches(
    recording: Path, window_s: float
) -> None:
    """At many random times; a 20 s window also drops points and series within a run.
    Every other seek reports its progress, so it folds in steps (its scrapes still
    gathered across them).
    """
    rng = random.Random(int(window_s))
    for i in range(20):
        with Recording(recording) as rec:
            rec.model_config = replace(rec.model_config, window_s=window_s)
            at = rng.uniform(rec.start, rec.end)
            steps: list[float] = []
            sought = rec.cursor(at, progress=steps.append if i % 2 else None)
            assert steps == sorted(steps)
            key = [k for k in rec.keyframes if k.first <= at][-1]
            model = rec._import(key)
            assert model is not None
            one = Cursor(rec, model, rec.frames.index(key) + 1)
            one.advance(at)
            assert sought.folded == one.folded
            assert _model_state(sought.model) == _model_state(one.model), at - rec.start
            assert sought.model.snapshot() == one.model.snapshot()


def _layout(e: ev.MetricsScraped) -> tuple[tuple[str, ...], tuple[ev.Labels, ...]]:
    return tuple(s.name for s in e.samples), tuple(s.labels for s in e.samples)


def _variants(events: list[ev.Event], rng: random.Random) -> list[ev.Event]:
    """The simulator's scrapes, some of them through the load balancer with its process
    changing now and then, and stretches without some families (stale series, layouts
    changing between runs).
    """
    out: list[ev.Event] = []
    process = 1.0
    dropped: set[str] = set()
    for e in events:
        if type(e) is not ev.MetricsScraped:
            continue
        if rng.random() < 0.05:
            names = sorted({s.name for s in e.samples})
            dropped = set(rng.sample(names, k=min(len(names), rng.randrange(0, 4))))
            if rng.random() < 0.5:  # the SLI histogram gone for a while: its series go stale
                dropped.add(SLI_BUCKET)
        samples = tuple(s for s in e.samples if s.name not in dropped)
        if e.target.instance.startswith("apiserver-0"):
            if rng.random() < 0.1:
                process += 1.0
            samples = tuple(s for s in samples if s.name != IDENTITY)
            samples += (ev.Sample(IDENTITY, (), process),)
            out.append(ev.MetricsScraped(e.at, LB, samples))
        out.append(replace(e, samples=samples))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_scrapes_folded_in_runs_leave_what_folding_each_leaves(seed: int) -> None:
    rng = random.Random(seed)
    scrapes = _variants(_sim_events(150, "apf-saturation" if seed % 2 else "steady"), rng)
    config = ModelConfig(window_s=[300.0, 30.0, 12.0][seed % 3])
    one, bulk = ClusterModel(config), ClusterModel(config)
    runs: dict[ev.Target, ScrapeRun] = {}
    for e in scrapes:
        assert type(e) is ev.MetricsScraped
        one.apply(e)
        names, labels = _layout(e)
        run = runs.get(e.target)
        if run is None or run.names != names or run.labels != labels or rng.random() < 0.02:
            if run is not None:
                bulk.fold_scrapes(run)
            run = runs[e.target] = ScrapeRun(e.target, names, labels)
        bulk.scrape_arrived(e.target, e.at)
        run.add(e.at, [s.value for s in e.samples])
        if rng.random() < 0.05:  # read in between: every run so far folded
            for r in runs.values():
                bulk.fold_scrapes(r)
            runs.clear()
            assert _model_state(bulk) == _model_state(one)
    for r in runs.values():
        bulk.fold_scrapes(r)
    assert _model_state(bulk) == _model_state(one)
    assert bulk.snapshot() == one.snapshot()
    assert bulk.slo_budgets  # the SLO counts were folded, not only the series


def test_a_run_whose_times_do_not_rise_is_folded_scrape_by_scrape() -> None:
    target = ev.Target(ev.Component.ETCD, "etcd-0:2379")
    names, labels = ("etcd_server_has_leader",), ((),)
    ts = TargetSeries(target, 300.0)
    assert ts.ingest_run(ScrapeRun(target, names, labels, [2.0, 2.0], [[1.0], [1.0]])) is None
    assert ts.scrapes == 0
    one, bulk = ClusterModel(), ClusterModel()
    for at in (5.0, 5.0, 4.0, 6.0):
        one.apply(ev.MetricsScraped(at, target, (ev.Sample(names[0], (), at),)))
        bulk.scrape_arrived(target, at)
    bulk.fold_scrapes(
        ScrapeRun(target, names, labels, [5.0, 5.0, 4.0, 6.0], [[5.0], [5.0], [4.0], [6.0]])
    )
    assert _model_state(bulk) == _model_state(one)


def _nodes(rng: random.Random, n: int) -> list[ev.NodeRecord]:
    out = []
    for i in range(n):
        ready = rng.choice([ev.Readiness.TRUE] * 4 + [ev.Readiness.FALSE, ev.Readiness.UNKNOWN])
        out.append(
            ev.NodeRecord(
                f"n{rng.randrange(n * 2 if i % 7 == 0 else 10**6)}-{i % 5}",
                rng.choice(["r1", "r2"]),
                rng.choice(["z1", "z2", "z3"]),
                rng.choice(["k1", "k2"]),
                ready,
                None if rng.random() < 0.3 else float(rng.randrange(1000)),
                rng.random() < 0.1,
                rng.random() < 0.1,
                rng.random() < 0.1,
                rng.random() < 0.1,
            )
        )
    return out


@pytest.mark.parametrize("seed", range(8))
def test_nodes_loaded_at_once_are_the_nodes_upserted_one_by_one(seed: int) -> None:
    rng = random.Random(seed)
    nodes = _nodes(rng, 300)
    if seed % 2:  # every name once (the usual keyframe)
        nodes = list({n.name: n for n in nodes}.values())
    one, bulk = NodesState(), NodesState()
    leases = {n.name: float(rng.randrange(100)) for n in nodes if rng.random() < 0.8}
    one.leases, bulk.leases = dict(leases), dict(leases)
    for n in nodes:
        one.upsert(n)
    bulk.load(nodes)
    # The renew times per domain are made from the Leases when first read.
    assert bulk.sorted_renews() == one.sorted_renews()
    for attr in ("nodes", "leases", "renews", "counts", "unhealthy", "_unhealthy_changes"):
        got, want = getattr(bulk, attr), getattr(one, attr)
        assert got == want, attr
        if isinstance(want, dict):
            assert list(got) == list(want), attr  # the same order
    assert bulk.not_ready_list(2000.0) == one.not_ready_list(2000.0)
    with pytest.raises(ValueError, match="without nodes"):
        bulk.load(nodes)


def test_node_records_are_made_as_from_plain_makes_them() -> None:
    rows: list[Any] = [to_plain(n) for n in _nodes(random.Random(1), 50)]
    rows += [rows[0][:6], [*rows[1], "a field from a newer ktop"], tuple(rows[2])]
    assert _node_records(rows) == [from_plain(ev.NodeRecord, r) for r in rows]
    for bad in (["n", "r", "z", "k", "Maybe", None, False, False, False, False], [1]):
        with pytest.raises((ValueError, TypeError)):
            _node_records([bad])
