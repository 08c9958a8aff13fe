"""Lease lag per zone and rack stays exact while the model caches sorted renew times."""

from __future__ import annotations

import random

from ktop.model.area_nodes import NodesConfig, NodesState, build_nodes
from ktop.model.events import NodeRecord, Readiness

CFG = NodesConfig(rack_label="rack", unhealthy_zone_threshold=0.55, lease_renew_interval_s=10.0)


def _expected(
    leases: dict[str, float], nodes: dict[str, NodeRecord], now: float
) -> dict[str, tuple[float, float]]:
    """Per zone: (max lag, lag of the upper-median renew time), computed from scratch."""
    by_zone: dict[str, list[float]] = {}
    for name, node in nodes.items():
        if name in leases:
            by_zone.setdefault(node.zone, []).append(leases[name])
    out = {}
    for zone, renews in by_zone.items():
        renews.sort()
        out[zone] = (now - renews[0], now - renews[len(renews) // 2])
    return out


def test_lag_is_recomputed_after_every_kind_of_change() -> None:
    rng = random.Random(7)
    state = NodesState()
    nodes: dict[str, NodeRecord] = {}
    leases: dict[str, float] = {}
    now = 1_000_000.0
    for step in range(40):
        for _ in range(rng.randrange(1, 30)):
            name = f"n{rng.randrange(120)}"
            action = rng.random()
            if action < 0.5:
                zone = rng.choice("abc")
                node = NodeRecord(
                    name, "r", zone, f"{zone}-{rng.randrange(4)}", Readiness.TRUE, None
                )
                state.upsert(node)
                nodes[name] = node
            elif action < 0.9:
                t = now - rng.uniform(0, 300)
                state.renew(name, t, t)
                leases[name] = t
            else:
                state.delete(name)
                nodes.pop(name, None)
                leases.pop(name, None)
        now += 1.0
        snap = build_nodes(state, now, CFG, nodes_known=True, nodes_reason="", leases_known=True)
        want = _expected(leases, nodes, now)
        got = {
            z.zone: (z.lease_lag_max_s.value, z.lease_lag_p50_s.value)
            for z in snap.zones
            if z.lease_lag_max_s.value is not None
        }
        assert got.keys() == want.keys(), step
        for zone, (lag_max, lag_p50) in want.items():
            assert got[zone][0] == lag_max
            assert got[zone][1] == lag_p50
        assert snap.total == len(nodes)
        if step % 10 == 0:  # nothing changed: only the clock moves
            now += 5.0
            again = build_nodes(
                state, now, CFG, nodes_known=True, nodes_reason="", leases_known=True
            )
            for z in again.zones:
                if z.lease_lag_max_s.value is not None:
                    assert z.lease_lag_max_s.value == want[z.zone][0] + 5.0
