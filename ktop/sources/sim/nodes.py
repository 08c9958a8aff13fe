"""The node fleet: topology, kubelet Lease renewals and node records.

Kept cheap for 100,000 nodes: names and records are created once, a record
is replaced only when something about the node changes, and Lease renewals
are found through a timing wheel keyed by the (whole) virtual second they
fall in, so each 1 s step touches only the ~nodes/10 leases that renew in it.

Times inside the simulator are offsets ("el", seconds since the start);
events carry absolute Unix times.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from sys import intern as sys_intern

from ktop.model.events import Event, LeaseRenewed, NodeRecord, NodeUpserted, Readiness

RENEW_INTERVAL_S = 10.0
"""``nodeLeaseDurationSeconds`` 40 x ``nodeLeaseRenewIntervalFraction`` 0.25."""
RENEW_JITTER = 0.04
"""``wait.JitterUntil(renew, 0.04)``: each wait is 10 s plus up to 4%."""
DAY_S = 86_400.0


def micro(t: float) -> float:
    """``t`` to the microsecond: a Lease's ``renewTime`` is a MicroTime."""
    return round(t * 1_000_000) / 1_000_000


def zone_names(region: str, zones: int) -> list[str]:
    """``us-east-1a``, ``us-east-1b``, ... (``-z26``, ``-z27`` past 26 zones)."""
    return [f"{region}{chr(ord('a') + z)}" if z < 26 else f"{region}-z{z}" for z in range(zones)]


class SimNodes:
    """All nodes: who they are, when their kubelets renew, what the API holds."""

    def __init__(
        self,
        rng: random.Random,
        *,
        nodes: int,
        zones: int,
        racks_per_zone: int,
        start_at: float,
        region: str = "us-east-1",
    ) -> None:
        self._rng = rng
        self.start_at = start_at
        self.region = region
        self.zone_names = zone_names(region, zones)
        self.zone_keys = [f"{region}:\x00:{z}" for z in self.zone_names]
        self.names: list[str] = []
        self.zone_of: list[int] = []
        self.records: list[NodeRecord] = []
        for z, zone in enumerate(self.zone_names):
            size = nodes // zones + (1 if z < nodes % zones else 0)
            for r in range(racks_per_zone):
                rack = sys_intern(f"{zone}-r{r:03d}")
                in_rack = size // racks_per_zone + (1 if r < size % racks_per_zone else 0)
                for n in range(in_rack):
                    name = sys_intern(f"{rack}-n{n:02d}")
                    self.names.append(name)
                    self.zone_of.append(z)
                    since = start_at - rng.uniform(1.0, 60.0) * DAY_S
                    self.records.append(
                        NodeRecord(name, region, zone, rack, Readiness.TRUE, float(round(since)))
                    )
        count = len(self.names)
        self.zone_size = [0] * zones
        for z in self.zone_of:
            self.zone_size[z] += 1
        self.zone_unhealthy = [0] * zones
        span = RENEW_INTERVAL_S * RENEW_JITTER
        waits = [RENEW_INTERVAL_S + span * rng.random() for _ in range(count)]
        self.last_renew = [-w * rng.random() for w in waits]
        """Offset of each node's latest renewal (at or before the start)."""
        self.next_renew = [last + w for last, w in zip(self.last_renew, waits, strict=True)]
        self._wheel: dict[int, list[int]] = {}
        for i, nxt in enumerate(self.next_renew):
            self._wheel.setdefault(math.ceil(nxt), []).append(i)
        self.halt_at: dict[int, float] = {}
        """Nodes whose kubelet stops renewing at this offset."""
        self.silent: dict[int, None] = {}
        """Nodes that have stopped renewing (ordered set)."""
        self.unhealthy: dict[int, None] = {}
        """Nodes whose Ready condition is not True (ordered set)."""

    def __len__(self) -> int:
        return len(self.names)

    def initial_events(self, at: float) -> list[Event]:
        """The initial list of Nodes and of their Leases."""
        out: list[Event] = [NodeUpserted(at, rec) for rec in self.records]
        start = self.start_at
        names = self.names
        out.extend(
            LeaseRenewed(at, names[i], micro(start + last))
            for i, last in enumerate(self.last_renew)
        )
        return out

    def renew(self, step: int, out: list[Event]) -> None:
        """Emit the Lease renewals that fall in ``(step - 1, step]``."""
        bucket = self._wheel.pop(step, None)
        if not bucket:
            return
        nxt = self.next_renew
        bucket.sort(key=nxt.__getitem__)
        rnd = self._rng.random
        wheel = self._wheel
        halt = self.halt_at
        names = self.names
        last = self.last_renew
        start = self.start_at
        span = RENEW_INTERVAL_S * RENEW_JITTER
        for i in bucket:
            el = nxt[i]
            if halt and (stop := halt.get(i)) is not None and el >= stop:
                self.silent[i] = None
                continue
            t = micro(start + el)
            out.append(LeaseRenewed(t, names[i], t))
            last[i] = el
            new = el + RENEW_INTERVAL_S + span * rnd()
            nxt[i] = new
            key = math.ceil(new)
            slot = wheel.get(key)
            if slot is None:
                wheel[key] = [i]
            else:
                slot.append(i)

    def halt(self, i: int, at_el: float) -> None:
        """The kubelet of node ``i`` stops renewing from ``at_el`` on."""
        self.halt_at[i] = at_el

    def update(self, i: int, el: float, out: list[Event], **changes: object) -> NodeRecord:
        """Replace node ``i``'s record and emit ``NodeUpserted``; keeps zone counts."""
        old = self.records[i]
        new: NodeRecord = replace(old, **changes)  # type: ignore[arg-type]
        self.records[i] = new
        was_ok = old.ready is Readiness.TRUE
        is_ok = new.ready is Readiness.TRUE
        if was_ok != is_ok:
            z = self.zone_of[i]
            if is_ok:
                self.zone_unhealthy[z] -= 1
                self.unhealthy.pop(i, None)
            else:
                self.zone_unhealthy[z] += 1
                self.unhealthy[i] = None
        out.append(NodeUpserted(self.start_at + el, new))
        return new

    def set_kubelet_ready(self, i: int, ready: bool, el: float, out: list[Event]) -> None:
        """The kubelet posts its Ready condition (True, or False e.g. for PLEG)."""
        want = Readiness.TRUE if ready else Readiness.FALSE
        if self.records[i].ready is not want:
            self.update(i, el, out, ready=want, ready_since=float(round(self.start_at + el)))
