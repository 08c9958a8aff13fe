"""Lease renewals folded in bulk (a recording's seek) leave the state one by one leaves;
renewal names decoded in bulk are the names referred to."""

from __future__ import annotations

import random

import pytest

from ktop.model import area_nodes
from ktop.model import events as ev
from ktop.model.area_nodes import NodesConfig, NodesState, build_nodes
from ktop.model.cluster import ClusterModel
from ktop.model.snapshot_nodes import NodesSnapshot
from ktop.record.codec import ChunkDecoder
from ktop.record.strict import RecordError

CFG = NodesConfig("rack", 0.55, 10.0)
NAMES = [f"n{i:02d}" for i in range(24)]


def _node(rng: random.Random, name: str) -> ev.NodeRecord:
    ready = rng.choice([ev.Readiness.TRUE, ev.Readiness.TRUE, ev.Readiness.FALSE])
    return ev.NodeRecord(
        name,
        "r1",
        rng.choice(["z1", "z2"]),
        rng.choice(["k1", "k2", "k3"]),
        ready,
        None if ready is ev.Readiness.TRUE else float(rng.randrange(1000)),
    )


def _view(state: NodesState, now: float) -> tuple[NodesSnapshot, dict[str, float]]:
    snap = build_nodes(state, now, CFG, nodes_known=True, nodes_reason="", leases_known=True)
    return snap, dict(state.leases)


def _script(seed: int) -> list[tuple[str, object]]:
    """A random mix of node changes, deletions, runs of renewals and a switch to sampling."""
    rng = random.Random(seed)
    t = 1000.0
    steps: list[tuple[str, object]] = []
    for _ in range(60):
        roll = rng.random()
        if roll < 0.25:
            steps.append(("upsert", _node(rng, rng.choice(NAMES))))
        elif roll < 0.3:
            steps.append(("delete", rng.choice(NAMES)))
        elif roll < 0.32:
            steps.append(("sample", (3, 10.0)))
        elif roll < 0.4:
            steps.append(("snapshot", t))
        else:
            run = []
            for _ in range(rng.randrange(1, 40)):  # names repeat within a run
                t += rng.random()
                run.append((rng.choice(NAMES), t - rng.random() * 5, t))
            steps.append(("renew", run))
    steps.append(("snapshot", t + 1))
    return steps


@pytest.mark.parametrize("share", [10_000, 0], ids=["placed-again", "renewal-by-renewal"])
@pytest.mark.parametrize("seed", range(12))
def test_renew_many_leaves_the_state_renew_one_by_one_leaves(
    seed: int, share: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways of folding a run (every Lease placed again, or each renewal into its
    domain) leave the state of renewals one by one."""
    monkeypatch.setattr(area_nodes, "PLACE_ALL_SHARE", share)
    one, bulk = NodesState(), NodesState()
    for kind, arg in _script(seed):
        for state in (one, bulk):
            if kind == "upsert":
                state.upsert(arg)  # type: ignore[arg-type]
            elif kind == "delete":
                state.delete(arg)  # type: ignore[arg-type]
            elif kind == "sample":
                state.sample(*arg)  # type: ignore[misc]
        if kind == "renew":
            run: list[tuple[str, float, float]] = arg  # type: ignore[assignment]
            for name, renew, seen in run:
                one.renew(name, renew, seen)
            names, renews, seen_at = (list(c) for c in zip(*run, strict=True))
            bulk.renew_many(names, renews, seen_at)
        elif kind == "snapshot":
            assert _view(bulk, arg) == _view(one, arg)  # type: ignore[arg-type]


def test_a_model_folds_a_run_of_renewals_as_it_folds_the_events() -> None:
    rng = random.Random(7)
    one, bulk = ClusterModel(), ClusterModel()
    nodes = [ev.NodeUpserted(10.0, _node(rng, name)) for name in NAMES]
    one.apply_all(nodes)
    bulk.apply_all(nodes)
    run = [ev.LeaseRenewed(20.0 + i * 0.25, rng.choice(NAMES), 19.0 + i * 0.25) for i in range(50)]
    one.apply_all(run)
    bulk.renew_leases([e.node for e in run], [e.renew_time for e in run], [e.at for e in run])
    assert bulk.now == one.now == run[-1].at
    assert bulk.feeds[ev.FEED_LEASES] == one.feeds[ev.FEED_LEASES]
    assert bulk.snapshot() == one.snapshot()


def test_renew_many_refuses_columns_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="as many renew times as names"):
        NodesState().renew_many(["a", "b"], [1.0], [1.0, 2.0])


@pytest.mark.parametrize("seed", range(6))
def test_name_references_resolve_to_the_names_they_point_back_to(seed: int) -> None:
    rng = random.Random(seed)
    dec = ChunkDecoder({})
    dec.new_chunk()
    seen: list[str] = []  # every reference so far, resolved independently
    first = [f"node-{i:03d}" for i in range(40)]
    assert dec._names(first) == first
    seen += first
    for _ in range(30):
        n = rng.randrange(1, min(60, len(seen)))
        if rng.random() < 0.5:  # a nearly fixed renewal order: every distance reaches back
            refs: list[str | int] = [rng.randrange(n, len(seen) + 1) for _ in range(n)]
        else:  # short distances into the run itself, and new names
            refs = [
                rng.randrange(1, len(seen) + i + 1) if rng.random() < 0.9 else f"new-{i}"
                for i in range(n)
            ]
        want = []
        for ref in refs:
            seen.append(ref if isinstance(ref, str) else seen[-ref])
            want.append(seen[-1])
        assert dec._names(refs) == want
    assert dec.names == seen
    with pytest.raises(RecordError, match="a reference 1-"):
        dec._names([len(seen) + 1])
    with pytest.raises(RecordError, match="a reference 1-"):
        dec._names([True])
