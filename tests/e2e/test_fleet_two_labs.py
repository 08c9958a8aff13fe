"""``ktop fleet`` over two real control planes at once.

The session lab (``ktop-lab``) and a small second lab (``ktop-lab-b``: 60 nodes, one etcd
member, no Prometheus of its own) are scraped by ONE Prometheus that labels each lab's
targets with its own ``cluster`` (as a global query endpoint holds many clusters). The fleet
is read twice at the same time: through that Prometheus with no kubeconfig at all, and
through a kubeconfig with one context per lab.

* A zone outage in lab B, then APF saturation in the session lab: each row shows its own
  problem and not the other's, as Prometheus (and the API) have it; the cell with the
  outage ranks ahead of the cell that is still healthy.
* Lab B goes away: its row turns unknown with the reason, the other row keeps being read.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes_asyncio import client

from ktop.analysis.findings import Severity
from ktop.analysis.fleet import CellSummary
from ktop.cli import parse_args
from ktop.commands.fleet import live_specs, prometheus_specs
from ktop.fleet import CellSpec, Fleet, FleetView
from ktop.lab import Lab, LabConfig, inject, kube, prom, recover, resolve_target
from ktop.lab.global_prom import GlobalPrometheus
from ktop.lab.scenarios_api import APF_NAME
from ktop.model.snapshot_nodes import ZoneState
from ktop.scrub import Secrets
from tests.e2e.cadence import (
    APF_FLOOD_S,
    KTOP_PROMETHEUS_S,
    POLL_EVERY_S,
    PROBE_LIMIT_S,
    REQUEST_LIMIT_S,
    cycles,
    deadline,
    in_prometheus_s,
    ktop_rates_s,
    lab_cadence,
    prometheus_cycle_s,
    prometheus_first_s,
    scrape_interval_s,
    steps,
)
from tests.e2e.helpers import nodes, ready_status, running_lab

B_CLUSTER = "ktop-lab-b"
B_NODES = 60
OUTAGE_ZONE = "zone-a"
SCRAPE_S = f"{KTOP_PROMETHEUS_S:g}"
"""The cells' poll interval (``--scrape-interval``): short, so the test waits little."""
NOTE_EVERY_S = 10.0
"""How often a long wait prints what it still waits for (not a deadline)."""
CELL_RATES_S = cycles(2, prometheus_cycle_s(KTOP_PROMETHEUS_S))
"""A cell's rate: two polls of Prometheus (or two scrapes, which take less)."""
JOBS = {"apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok"}
ZONE_CODE = "KT-NODE-001"
"""The finding of a zone in FullDisruption."""
APF_CODE = "KT-APF-001"
"""The finding of a priority level that rejects requests."""
NODES_PATH = "P4"
"""The triage path 'Many nodes NotReady at once'."""
T = TypeVar("T")


@pytest.fixture(scope="module")
def lab_b(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A second, small lab with its own cluster label, started after the session lab
    (whose fixture skips when the binaries are missing)."""
    cfg = LabConfig(nodes=B_NODES, etcd_members=1, cluster=B_CLUSTER, prometheus=False)
    with running_lab(tmp_path_factory.mktemp("ktop-lab-b"), cfg) as instance:
        yield instance


@pytest.fixture(scope="module")
def global_prom(
    lab: Lab, lab_b: Lab, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GlobalPrometheus]:
    """One Prometheus scraping both labs, each with its own ``cluster`` label."""
    assert lab.cfg.cluster != lab_b.cfg.cluster
    gp = GlobalPrometheus(
        tmp_path_factory.mktemp("global-prometheus"),
        {lab.cfg.cluster: lab.dir, lab_b.cfg.cluster: lab_b.dir},
    )
    try:
        gp.start()
        yield gp
    finally:
        gp.stop()
        assert not gp.running(), f"global Prometheus left behind: {gp.running()}"


@pytest.fixture
def no_kubeconfig(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No kubeconfig anywhere: HOME and KUBECONFIG point into an empty directory."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KTOP_CONFIG_DIR", str(tmp_path))


def fleet_kubeconfig(path: Path, labs: list[Lab]) -> Path:
    """One kubeconfig with a context per lab, named after the lab's cluster (each lab's
    own kubeconfig calls its context ``ktop-e2e``: merged as kubectl does, the first wins).
    """
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    for key in ("clusters", "users", "contexts"):
        merged[key] = []
    for lab in labs:
        own = json.loads(lab.layout.kubeconfig.read_text(encoding="utf-8"))
        ctx = next(c["context"] for c in own["contexts"] if c["name"] == own["current-context"])
        name = lab.cfg.cluster
        merged["clusters"].append(
            {"name": name, "cluster": next(c["cluster"] for c in own["clusters"]
                                           if c["name"] == ctx["cluster"])}
        )  # fmt: skip
        merged["users"].append(
            {
                "name": name,
                "user": next(u["user"] for u in own["users"] if u["name"] == ctx["user"]),
            }
        )
        merged["contexts"].append({"name": name, "context": {"cluster": name, "user": name}})
    merged["current-context"] = labs[0].cfg.cluster
    path.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


# -- independent evidence: the global Prometheus and the API ----------------------------


def q(gp: GlobalPrometheus, promql: str) -> list[dict[str, Any]]:
    """An instant query against the global Prometheus."""
    return prom.query(gp.url, promql)


def unhealthy_by_zone(gp: GlobalPrometheus, cluster: str) -> dict[str, tuple[float, float]]:
    """(unhealthy, size) per zone, as the cluster's node lifecycle controller has it."""
    sel = f'{{job="kube-controller-manager",cluster="{cluster}"}}'
    size = {
        r["metric"]["zone"].rpartition(":")[2]: r["value"]
        for r in q(gp, f"node_collector_zone_size{sel}")
    }
    bad = {
        r["metric"]["zone"].rpartition(":")[2]: r["value"]
        for r in q(gp, f"node_collector_unhealthy_nodes_in_zone{sel}")
    }
    return {z: (bad.get(z, 0.0), size[z]) for z in size}


def rejected_by_level(gp: GlobalPrometheus, cluster: str) -> dict[str, float]:
    """APF rejections so far per priority level, summed over the cluster's apiservers."""
    rows = q(
        gp,
        "sum by (priority_level) (apiserver_flowcontrol_rejected_requests_total"
        f'{{job="apiserver",cluster="{cluster}"}})',
    )
    return {r["metric"]["priority_level"]: r["value"] for r in rows}


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """A blocking read of the evidence, in a thread: the cells run in this event loop, and
    a busy machine makes each read slow enough to hold them up."""
    return await asyncio.to_thread(fn, *args)


def rejected_since(now: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """Rejections per level between two readings (levels that rejected nothing left out)."""
    return {lvl: n - before.get(lvl, 0.0) for lvl, n in now.items() if n > before.get(lvl, 0.0)}


async def api_nodes(lab: Lab) -> list[Any]:
    """Every node of the lab, read from its API (inside the test's event loop)."""
    async with kube.api_client(lab.layout.kubeconfig) as api:
        return list((await client.CoreV1Api(api).list_node()).items)


async def not_ready_by_api(lab: Lab) -> int:
    """Nodes whose Ready condition is not True, read from the API."""
    return sum(ready_status(n) != "True" for n in await api_nodes(lab))


# -- driving fleets ----------------------------------------------------------------------


@asynccontextmanager
async def running(specs: list[CellSpec]) -> AsyncIterator[Fleet]:
    """A Fleet whose cells run until the block ends."""
    fleet = Fleet(specs)
    tasks = [asyncio.create_task(c.run()) for c in fleet.cells]
    try:
        yield fleet
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def until(
    what: str, timeout_s: float, check: Callable[[], Awaitable[tuple[bool, object]]]
) -> None:
    """Call ``check`` (ok, detail) every second until ok; fail with the detail at the
    deadline.
    """
    started = time.monotonic()
    ends = started + timeout_s
    next_note = started + NOTE_EVERY_S
    while True:
        ok, detail = await check()
        if ok:
            print(f"{what}: {time.monotonic() - started:.1f}s")  # shown with -s or on failure
            return
        if time.monotonic() >= next_note:
            next_note += NOTE_EVERY_S
            print(f"waiting for {what}: {detail}")
        if time.monotonic() >= ends:
            pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what}; last: {detail}")
        await asyncio.sleep(POLL_EVERY_S)


def global_in_prometheus_s(gp: GlobalPrometheus) -> float:
    """A change in either lab is in the global Prometheus."""
    return in_prometheus_s(scrape_interval_s(gp.layout.prometheus_config))


def failing(fleet: Fleet) -> dict[str, list[str]]:
    """Each cell's inputs that report an error (what a timed-out wait shows)."""
    return {
        c.name: [f"{f.name}: {f.error}" for f in c.hub.latest.snapshot.freshness if f.error]
        for c in fleet.cells
    }


def rows(view: FleetView) -> dict[str, tuple[int, CellSummary]]:
    """Each cell's (rank, row)."""
    return {c.name: (i, c) for i, c in enumerate(view.cells)}


def zone_states(row: CellSummary) -> dict[str, ZoneState | None]:
    """The row's zones and their states."""
    return dict(row.zones)


async def both_fleets(
    gp: GlobalPrometheus, kubeconfig: Path, a: str, b: str
) -> tuple[list[CellSpec], list[CellSpec]]:
    """The specs ``ktop fleet`` builds: from the global Prometheus (no kubeconfig), and
    from two contexts of one kubeconfig.
    """
    prom_args = parse_args(
        ["fleet", "--prometheus", gp.url, "--scrape-interval", SCRAPE_S], environ={}
    )
    kube_args = parse_args(
        ["fleet", "--kubeconfig", str(kubeconfig), "--context", a, "--context", b,
         "--scrape-interval", SCRAPE_S],
        environ={},
    )  # fmt: skip
    by_prom = await prometheus_specs(prom_args, Secrets())
    by_kube = await live_specs(kube_args, [a, b], Secrets())
    return by_prom, by_kube


# -- tests -------------------------------------------------------------------------------


def test_the_global_prometheus_holds_both_labs_under_their_own_cluster(
    lab: Lab, lab_b: Lab, global_prom: GlobalPrometheus
) -> None:
    want = {(c, j) for c in (lab.cfg.cluster, lab_b.cfg.cluster) for j in JOBS}
    ends = time.monotonic() + deadline(global_in_prometheus_s(global_prom))
    while True:
        got = {(r["metric"]["cluster"], r["metric"]["job"]) for r in q(global_prom, "up == 1")}
        if got == want:
            break
        assert time.monotonic() < ends, (got, want)
        time.sleep(POLL_EVERY_S)
    # Each lab's own node count, under its own label.
    query = 'sum by (cluster) (node_collector_zone_size{job="kube-controller-manager"})'
    sizes = {r["metric"]["cluster"]: r["value"] for r in q(global_prom, query)}
    assert sizes == {lab.cfg.cluster: len(nodes(lab)), lab_b.cfg.cluster: len(nodes(lab_b))}


async def test_fleet_ranks_and_describes_a_zone_outage_and_apf_saturation(
    lab: Lab, lab_b: Lab, global_prom: GlobalPrometheus, no_kubeconfig: None, tmp_path: Path
) -> None:
    a, b = lab.cfg.cluster, lab_b.cfg.cluster
    kubeconfig = fleet_kubeconfig(tmp_path / "fleet-kubeconfig", [lab, lab_b])
    by_prom, by_kube = await both_fleets(global_prom, kubeconfig, a, b)
    assert sorted(s.name for s in by_prom) == sorted(s.name for s in by_kube) == sorted([a, b])
    gp = global_prom
    before = {c: rejected_by_level(gp, c) for c in (a, b)}
    target_a = resolve_target(lab.layout.kubeconfig)
    target_b = resolve_target(lab_b.layout.kubeconfig)
    async with running(by_prom) as pf, running(by_kube) as kf:
        fleets = {"prometheus": pf, "kubeconfig": kf}

        async def read_everywhere() -> tuple[bool, object]:
            # An earlier test's outage may still be healing: both labs healthy first, as
            # their node lifecycle controllers have it.
            healthy = {
                c: not any(bad for bad, _ in (await off_loop(unhealthy_by_zone, gp, c)).values())
                for c in (a, b)
            }
            views = {m: f.refresh() for m, f in fleets.items()}
            ok = all(r.read and r.zones for v in views.values() for r in v.cells)
            errors = {m: failing(f) for m, f in fleets.items()}
            return ok and all(healthy.values()), (healthy, views, errors)

        # The cells read (the Prometheus cells after their backfill), while an earlier
        # test's outage in the session lab may still be healing.
        healed = max(lab_cadence(lab).zone_back_s, lab_cadence(lab_b).zone_back_s)
        settled = max(prometheus_first_s(), healed + global_in_prometheus_s(gp))
        await until(
            "every cell read in both modes, both labs healthy", deadline(settled), read_everywhere
        )
        # The Prometheus cells read nothing but Prometheus.
        for cell in pf.cells:
            snap = cell.hub.latest.snapshot
            assert snap.nodes.metrics_only is not None and not snap.nodes.nodes_known

        await inject("zone-outage", target_b, zone=OUTAGE_ZONE)
        flood: asyncio.Task[dict[str, Any]] | None = None
        try:
            # 1. The outage alone: B's row shows it as the controller has it, and ranks
            # ahead of A, in which Prometheus sees no unhealthy node and no rejection.
            async def outage_shown() -> tuple[bool, object]:
                zones_b = await off_loop(unhealthy_by_zone, gp, b)
                zones_a = await off_loop(unhealthy_by_zone, gp, a)
                full = {z for z, (bad, size) in zones_b.items() if bad == size > 0}
                healthy_a = not any(bad for bad, _ in zones_a.values()) and not rejected_since(
                    await off_loop(rejected_by_level, gp, a), before[a]
                )
                api_b = await not_ready_by_api(lab_b)
                detail: dict[str, object] = {"prometheus B": zones_b, "api B": api_b}
                if full != {OUTAGE_ZONE} or not healthy_a:
                    return False, detail
                for mode, f in fleets.items():
                    got = rows(f.refresh())
                    (rank_a, row_a), (rank_b, row_b) = got[a], got[b]
                    detail[mode] = (row_b.zones, row_b.not_ready, rank_b, rank_a)
                    bad_b = sum(bad for bad, _ in zones_b.values())
                    want_nr = api_b if mode == "kubeconfig" else bad_b
                    if not (
                        zone_states(row_b).get(OUTAGE_ZONE) is ZoneState.FULL_DISRUPTION
                        and row_b.not_ready.value == want_nr
                        and row_a.read
                    ):
                        return False, detail
                    assert rank_b < rank_a, (mode, got)
                return True, detail

            shown = deadline(
                lab_cadence(lab_b).zone_down_s, global_in_prometheus_s(gp), CELL_RATES_S
            )
            await until(f"{OUTAGE_ZONE} of {b} FullDisruption in both modes", shown, outage_shown)

            # 2. APF saturation in A while B's outage lasts.
            flood = asyncio.create_task(inject("apf-saturation", target_a))

            async def both_shown() -> tuple[bool, object]:
                new_a = rejected_since(await off_loop(rejected_by_level, gp, a), before[a])
                new_b = rejected_since(await off_loop(rejected_by_level, gp, b), before[b])
                zones_a = await off_loop(unhealthy_by_zone, gp, a)
                zones_b = await off_loop(unhealthy_by_zone, gp, b)
                detail: dict[str, object] = {"rejected A": new_a, "rejected B": new_b}
                if not new_a:
                    return False, detail
                # The level that rejected most, as Prometheus counts it.
                worst = max(new_a, key=lambda lvl: new_a[lvl])
                for mode, f in fleets.items():
                    got = rows(f.refresh())
                    row_a, row_b = got[a][1], got[b][1]
                    detail[mode] = (row_a.apf_level, row_a.apf_rejected_per_s, row_a.codes,
                                    row_b.zones, row_b.codes)  # fmt: skip
                    if not (
                        row_a.apf_level == worst
                        and row_a.apf_rejected_per_s.or_(0.0) > 0
                        and APF_CODE in row_a.codes
                        and ZONE_CODE in row_b.codes
                    ):
                        return False, detail
                    # Each row names its own problem, not the other's.
                    assert all(s is ZoneState.NORMAL for s in zone_states(row_a).values()), (
                        mode, row_a, zones_a,
                    )  # fmt: skip
                    assert not any(bad for bad, _ in zones_a.values())
                    assert row_a.not_ready.value == 0, (mode, row_a)
                    assert ZONE_CODE not in row_a.codes and NODES_PATH not in row_a.suspects
                    assert zone_states(row_b)[OUTAGE_ZONE] is ZoneState.FULL_DISRUPTION
                    assert {z for z, (bad, _) in zones_b.items() if bad} == {OUTAGE_ZONE}
                    if mode == "kubeconfig":  # triage reads nodes, which metrics-only lacks
                        assert NODES_PATH in row_b.suspects, (mode, row_b)
                    assert not new_b and APF_CODE not in row_b.codes, (mode, new_b, row_b)
                    assert row_b.apf_rejected_per_s.or_(0.0) == 0, (mode, row_b)
                    assert row_a.severity > Severity.OK and row_b.severity > Severity.OK
                return True, detail

            # steps: the injector writes its FlowSchema and priority level, and both
            # apiservers' APF configuration controllers take them up
            flooded = deadline(steps(2), APF_FLOOD_S, global_in_prometheus_s(gp), CELL_RATES_S)
            await until("both problems shown in both modes", flooded, both_shown)
            statuses = (await flood)["statuses"]
            assert int(statuses.get("429", 0)) > 0, statuses

            # The flooded level rejected most, as Prometheus counts. A scrape of a flooded
            # apiserver can miss its time limit, and its series are then absent until the
            # next one: read until one lands.
            async def flooded_level_worst() -> tuple[bool, object]:
                got = rejected_since(await off_loop(rejected_by_level, gp, a), before[a])
                return worst_level_is(APF_NAME, got), got

            counted = deadline(global_in_prometheus_s(gp))
            await until(f"{APF_NAME} rejected most in Prometheus", counted, flooded_level_worst)
        finally:
            if flood is not None:
                await asyncio.gather(flood, return_exceptions=True)
            await recover("apf-saturation", target_a)
            await recover("zone-outage", target_b, zone=OUTAGE_ZONE)


def worst_level_is(level: str, rejected: dict[str, float]) -> bool:
    """True when ``level`` rejected most (the flooded level is the saturated one)."""
    return bool(rejected) and max(rejected, key=lambda lvl: rejected[lvl]) == level


async def test_a_cell_that_goes_away_turns_unknown_with_the_reason(
    lab: Lab, lab_b: Lab, global_prom: GlobalPrometheus, no_kubeconfig: None, tmp_path: Path
) -> None:
    a, b = lab.cfg.cluster, lab_b.cfg.cluster
    kubeconfig = fleet_kubeconfig(tmp_path / "fleet-kubeconfig", [lab, lab_b])
    by_prom, by_kube = await both_fleets(global_prom, kubeconfig, a, b)
    async with running(by_prom) as pf, running(by_kube) as kf:
        fleets = {"prometheus": pf, "kubeconfig": kf}

        async def read_everywhere() -> tuple[bool, object]:
            views = {m: f.refresh() for m, f in fleets.items()}
            ok = all(r.read and r.zones for v in views.values() for r in v.cells)
            return ok, [
                (m, r.name, r.reason, r.at, r.zones_reason, failing(fleets[m]))
                for m, v in views.items()
                for r in v.cells
            ]

        await until(
            "every cell read in both modes", deadline(prometheus_first_s()), read_everywhere
        )
        stopping = time.monotonic()
        lab_b.stop()  # the whole control plane of B goes away
        print(f"lab B stopped in {time.monotonic() - stopping:.1f}s")
        total_a = len(await api_nodes(lab))

        async def b_unknown() -> tuple[bool, object]:
            detail = {}
            for mode, f in fleets.items():
                got = rows(f.refresh())
                row_a, row_b = got[a][1], got[b][1]
                detail[mode] = (row_b.severity, row_b.reason, row_a.reason, row_a.nodes_total)
                if not (row_b.reason and not row_b.read and row_b.severity >= Severity.UNKNOWN):
                    return False, detail
                # A keeps being read.
                assert row_a.read and row_a.nodes_total.value == total_a, (mode, row_a)
            return True, detail

        # Prometheus cells: B's targets down in the global Prometheus, then two polls; the
        # kubeconfig cells: a request in flight ends at its limit, then two failed scrapes.
        gone = max(
            global_in_prometheus_s(global_prom) + CELL_RATES_S,
            REQUEST_LIMIT_S + cycles(2, KTOP_PROMETHEUS_S),
        )
        await until(f"{b} unknown with a reason in both modes", deadline(gone), b_unknown)
        for f in fleets.values():
            (_, row_b) = rows(f.view)[b]
            assert "KT-FLEET-010" in row_b.codes

    # A fleet started now cannot reach B at all: unknown with why, from the start.
    _, by_kube = await both_fleets(global_prom, kubeconfig, a, b)
    async with running(by_kube) as kf:

        async def b_unreachable() -> tuple[bool, object]:
            got = rows(kf.refresh())
            row_a, row_b = got[a][1], got[b][1]
            ok = row_a.read and bool(row_b.reason) and row_b.not_ready.value is None
            return ok and "connecting" not in row_b.reason, (row_a.reason, row_b.reason)

        # B's probe fails (at most at its limit); A is read (a rate needs two scrapes)
        unreachable = deadline(PROBE_LIMIT_S, ktop_rates_s(KTOP_PROMETHEUS_S))
        await until(f"{b} unreachable from a new fleet", unreachable, b_unreachable)
