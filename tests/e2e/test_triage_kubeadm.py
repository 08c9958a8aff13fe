"""Triage with nothing but a kubeconfig, on a lab laid out as kubeadm lays one out.

The lab here gives each control-plane host an address of its own, runs the components on
kubeadm's ports with leader election, and keeps their pods in kube-system on
control-plane nodes (``ktop/lab/control_plane.py``): what a user who starts with
``ktop --context`` on a kubeadm cluster has. Each injected scenario runs once, watched at
the same time by two live sources: one with nothing but the kubeconfig (it finds the
apiservers in the ``kubernetes`` EndpointSlices and the other components by label,
reading them through the pod proxy) and one given every component's URL. Both must name
the injected cause as the probable cause; the seconds from the injection until each
does are the figures of ``docs/triage.md`` (written to ``KTOP_TRIAGE_LATENCY_OUT`` when
that is set). The healthy lab must give no incident, and ``ktop triage --context`` exit 0.
Every wait's deadline comes from the cadence of what it waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktop.analysis.triage.evaluate import triage
from ktop.commands.options import DEFAULT_LOOK_BACK_S
from ktop.lab import Lab, inject, recover, resolve_target
from ktop.model.snapshot import ClusterSnapshot
from ktop.sampling import LOOK_BACK_PROMETHEUS, LOOK_BACK_SINCE_START
from ktop.sources.live.options import LiveOptions
from tests.e2e.cadence import (
    APF_FLOOD_S,
    APISERVER_READY_LIMIT_S,
    COMPONENT_STOP_S,
    ETCD_ELECTION_LIMIT_S,
    KTOP_DISCOVERY_S,
    KTOP_SCRAPE_S,
    PROBE_LIMIT_S,
    PROCESS_START_S,
    REQUEST_LIMIT_S,
    cycles,
    deadline,
    lab_cadence,
    steps,
)
from tests.e2e.helpers import KUBEADM_GROUP, e2e_lab_config, running_lab
from tests.e2e.live import Running, account, live, options

XDIST_GROUP = KUBEADM_GROUP
"""Its labs are laid out as kubeadm lays one out: a worker of their own (tests/e2e/conftest.py)."""

LATENCY_OUT = "KTOP_TRIAGE_LATENCY_OUT"
"""Where to write the measured seconds from injection to the headline (JSON), if set."""
COMPONENTS_ROLE = "ktop-components"


LAB_STARTED_AT: list[float] = []
"""Wall time just before the module's lab started (its processes started after it)."""


@pytest.fixture(scope="module")
def kubeadm_lab(binaries_present: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    cfg = replace(e2e_lab_config(), kubeadm_hosts=True)
    LAB_STARTED_AT[:] = [time.time()]
    with running_lab(tmp_path_factory.mktemp("ktop-lab-kubeadm"), cfg) as lab:
        yield lab


@pytest.fixture(scope="module")
def kubeconfig(kubeadm_lab: Lab) -> Path:
    # docs/rbac.yaml's reader, and its optional role for the components' pods and Leases
    return asyncio.run(account(kubeadm_lab, "ktop-kubeadm", also=(COMPONENTS_ROLE,)))


def kubeconfig_only(kubeconfig: Path) -> LiveOptions:
    """What ``ktop --context`` runs with: the kubeconfig, and the e2e cadence."""
    return LiveOptions(
        kubeconfig=str(kubeconfig),
        apiserver_scrape_s=KTOP_SCRAPE_S,
        apf_dump_s=KTOP_SCRAPE_S,
        component_scrape_s=KTOP_SCRAPE_S,
        discovery_s=KTOP_DISCOVERY_S,
    )


READ_ALL_S = deadline(PROCESS_START_S, PROBE_LIMIT_S, cycles(2, KTOP_DISCOVERY_S), steps(1))
"""Until a source has found every component (discovery every KTOP_DISCOVERY_S) and
scraped each twice."""


def _read_everything(lab: Lab) -> Any:
    etcd = len(lab.info["etcd"])

    def check(s: ClusterSnapshot) -> bool:
        assert len(s.etcd.members) == etcd and all(not m.error for m in s.etcd.members), [
            (m.instance, m.error) for m in s.etcd.members
        ]
        assert all(m.wal_fsync_p99_s.known or m.wal_fsync_p99_s.empty for m in s.etcd.members)
        assert s.scheduler.metrics_reason == "", s.scheduler.metrics_reason
        assert len(s.apiservers.instances) == 2 and all(
            r.requests_per_s.known for r in s.apiservers.instances
        ), [(r.instance, r.requests_per_s) for r in s.apiservers.instances]
        return True

    return check


def _caused(s: ClusterSnapshot, expected: str | None) -> bool:
    """True when the probable cause is ``expected`` (None: no incident); else it raises,
    naming what triage says instead (the wait reports the last one)."""
    report = triage(s)
    got = None if report.cause is None else report.cause.id
    assert got == expected, (got, [p.id for p in report.suspects])
    return True


@dataclass
class Watch:
    """A live source watched until its headline names a cause."""

    name: str
    run: Running


@pytest.fixture
async def watches(kubeadm_lab: Lab, kubeconfig: Path) -> AsyncIterator[list[Watch]]:
    """Two live sources on the lab: the kubeconfig alone, and every component's URL; both
    have read every component before the test injects anything."""
    async with AsyncExitStack() as stack:
        runs = [
            Watch(
                "kubeconfig only",
                await stack.enter_async_context(
                    live(kubeconfig_only(kubeconfig), window_s=MODEL_WINDOW_S)
                ),
            ),
            Watch(
                "component URLs",
                await stack.enter_async_context(
                    live(options(kubeadm_lab, kubeconfig), window_s=MODEL_WINDOW_S)
                ),
            ),
        ]
        for w in runs:
            await w.run.until(
                _read_everything(kubeadm_lab),
                timeout_s=READ_ALL_S,
                what=f"{w.name}: every component read",
            )
        yield runs


LATENCIES: dict[str, dict[str, Any]] = {}
MODEL_WINDOW_S = 30.0
"""The watching sources' window (``--window`` of ``ktop triage``): short, so that what one
scenario leaves in it (rejections, a leader change) has left before the next begins."""
CLEARS_S = deadline(MODEL_WINDOW_S, cycles(2, KTOP_SCRAPE_S), steps(1))
"""Until what an earlier scenario left in the window has left it."""


async def _no_incident(watches: list[Watch]) -> None:
    """Both sources see no incident before the injection, so that what they name next is
    the injection's."""
    for w in watches:
        await w.run.until(
            lambda s: _caused(s, None),
            timeout_s=CLEARS_S,
            what=f"{w.name}: no incident before the injection",
        )


async def _until_cause(
    watches: list[Watch], scenario: str, expected: str, happens_s: float, injected: float
) -> None:
    """Both sources name ``expected`` as the probable cause, within what it takes to happen
    and two scrapes; record each one's seconds since the injection began (``injected``,
    monotonic).
    """
    timeout_s = deadline(happens_s, cycles(2, KTOP_SCRAPE_S), steps(1))

    async def one(w: Watch) -> tuple[str, float]:
        await w.run.until(
            lambda s: _caused(s, expected),
            timeout_s=timeout_s,
            what=f"{w.name}: probable cause {expected}",
        )
        return w.name, time.monotonic() - injected

    row: dict[str, Any] = {"cause": expected}
    for name, seconds in await asyncio.gather(*(one(w) for w in watches)):
        row[name] = round(seconds, 1)
    LATENCIES[scenario] = row


@pytest.fixture(scope="module", autouse=True)
def _write_latencies(kubeadm_lab: Lab) -> Iterator[None]:
    yield
    out = os.environ.get(LATENCY_OUT)
    if out and LATENCIES:
        doc = {
            "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "cpus": os.cpu_count(),
            "nodes": kubeadm_lab.cfg.nodes,
            "scrape_s": KTOP_SCRAPE_S,
            "discovery_s": KTOP_DISCOVERY_S,
            "window_s": MODEL_WINDOW_S,
            "scenarios": LATENCIES,
        }
        Path(out).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def _target(lab: Lab) -> Any:
    return resolve_target(lab.layout.kubeconfig)


async def _triage(kubeconfig: Path, *more: str) -> tuple[int, dict[str, Any]]:
    """``ktop triage --context`` with nothing but ``kubeconfig`` (and ``more`` options):
    exit code and report."""
    ctx = str(yaml.safe_load(kubeconfig.read_text())["current-context"])
    window_s = cycles(3, KTOP_SCRAPE_S) + KTOP_DISCOVERY_S
    cmd = [
        sys.executable, "-m", "ktop", "--kubeconfig", str(kubeconfig), "--scrape-interval",
        f"{KTOP_SCRAPE_S:g}", "triage", "--context", ctx, "--window", f"{window_s:g}",
        "--output", "json", *more,
    ]  # fmt: skip
    done = await asyncio.to_thread(
        subprocess.run,
        cmd,
        capture_output=True,
        text=True,
        check=False,
        timeout=deadline(PROCESS_START_S, PROBE_LIMIT_S, window_s, REQUEST_LIMIT_S, steps(1)),
    )
    doc: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, doc


def _unknown(doc: dict[str, Any], because: str) -> dict[str, str]:
    """Evidence that is unknown, by id, whose reason holds ``because``."""
    return {
        e["id"]: e["detail"]
        for p in doc["paths"]
        for e in p["evidence"]
        if e["status"] == "unknown" and because in e["detail"]
    }


async def test_healthy_kubeadm_lab_is_no_incident_from_the_kubeconfig_alone(
    kubeadm_lab: Lab, kubeconfig: Path
) -> None:
    code, doc = await _triage(kubeconfig)
    suspects = [
        (
            p["id"],
            [
                (e["id"], e["status"], e["detail"][:160])
                for e in p["evidence"]
                if e["status"] in ("warn", "bad")
            ],
        )
        for p in doc["paths"]
        if p["verdict"] == "suspect"
    ]
    assert code == 0 and doc["cause"] is None, (suspects, doc["headline"])
    # every component was found and read without its URL
    etcd = doc["signals"]["etcd"]
    assert sorted(r["instance"] for r in etcd) == [f"etcd-cp-{i + 1}" for i in range(len(etcd))]
    assert all(r["error"] == "" for r in etcd), etcd
    assert not _unknown(doc, "403")
    # it judged the default look-back, from the counters since each process started: the
    # lab's members started within it, and their first leader is no change
    assert doc["source"]["look_back_s"] == DEFAULT_LOOK_BACK_S, doc["source"]
    assert doc["source"]["look_back_from"] == LOOK_BACK_SINCE_START, doc["source"]
    assert time.time() - LAB_STARTED_AT[0] < DEFAULT_LOOK_BACK_S, "the lab is older than it"
    assert _evidence(doc, "ETCD", "etcd.leader_changes")["status"] == "ok"


async def test_without_the_components_role_what_cannot_be_read_is_unknown_never_bad(
    kubeadm_lab: Lab,
) -> None:
    """docs/rbac.yaml's reader alone: the pod proxy and the components' Leases are refused,
    so etcd, the scheduler's queues and the leaders are unknown, with the refusal as the
    reason; the healthy lab is still no incident, and nothing unread is bad."""
    code, doc = await _triage(await account(kubeadm_lab, "ktop-reader-only"))
    assert code == 0 and doc["cause"] is None, doc["headline"]
    refused = _unknown(doc, "403")
    assert {"etcd.has_leader", "etcd.wal_fsync_p99", "ha.scheduler_leader"} <= set(refused)
    bad = [(p["id"], e["id"]) for p in doc["paths"] for e in p["evidence"] if e["status"] == "bad"]
    assert not bad, bad
    assert all(p["verdict"] != "suspect" for p in doc["paths"])


def _evidence(doc: dict[str, Any], path: str, evidence: str) -> dict[str, Any]:
    p = next(p for p in doc["paths"] if p["id"] == path)
    found: dict[str, Any] = next(e for e in p["evidence"] if e["id"] == evidence)
    return found


def _names_etcd(doc: dict[str, Any]) -> bool:
    """ETCD is the probable cause or an independent suspect, named in the headline: the
    clients' reconnection after the election can skew the apiservers' load, a suspect of
    its own whose rank against ETCD is the diagnosis' (onset), not the look-back's."""
    named = [doc["cause"]["id"]] if doc["cause"] else []
    return "ETCD" in [*named, *doc["independent"]] and "ETCD" in doc["headline"]


ONE_SHOTS_AFTER_S = (30.0, 90.0)
"""When a paged SRE, a rollout gate or a cron job runs ``ktop triage`` after a leader loss:
seconds after the new leader was elected (the injection returns then)."""


def _covering_the_lab() -> list[str]:
    """A ``--look-back`` that covers the lab's whole life when it is older than the
    default (a slow machine): the members' counters since their start then count."""
    age_s = time.time() - LAB_STARTED_AT[0] + cycles(1, KTOP_DISCOVERY_S)
    return [] if age_s < DEFAULT_LOOK_BACK_S else ["--look-back", f"{age_s:.0f}"]


async def test_a_one_shot_after_an_etcd_leader_loss_looks_back_and_names_etcd(
    kubeadm_lab: Lab, kubeconfig: Path
) -> None:
    """The one-shot runs after the election, not through it: its own seconds see one
    leader on the survivors, and only the look-back holds the change. Without Prometheus,
    the survivors (started within the look-back) count a second leader since their start;
    with it, Prometheus' range over the look-back holds the counter's increase.

    Slow: the scenario is a one-shot 90 s after the election, and a third one follows with
    Prometheus; each samples its own window (three scrapes and a discovery) after its
    process starts, about 25 s, and the killed member's restart ends it.
    """
    result = await inject("etcd-leader-loss", _target(kubeadm_lab))
    elected = time.monotonic()
    try:
        for after_s in ONE_SHOTS_AFTER_S:
            # the moment the scenario names, not a wait for luck
            await asyncio.sleep(max(0.0, elected + after_s - time.monotonic()))
            code, doc = await _triage(kubeconfig, *_covering_the_lab())
            changes = _evidence(doc, "ETCD", "etcd.leader_changes")
            assert code == 1 and _names_etcd(doc), (after_s, doc["headline"], changes)
            assert changes["status"] in ("warn", "bad"), (after_s, changes)
            assert "counted since each member started within" in changes["detail"], changes
            assert doc["source"]["look_back_from"] == LOOK_BACK_SINCE_START
        prom = ["--prometheus", str(kubeadm_lab.info["prometheus_url"])]
        code, doc = await _triage(kubeconfig, *prom, *_covering_the_lab())
        assert doc["source"]["look_back_from"] == LOOK_BACK_PROMETHEUS, doc["source"]
        assert code == 1 and _names_etcd(doc), doc["headline"]
    finally:
        await recover("etcd-leader-loss", _target(kubeadm_lab), member=result["old_leader"])


async def test_scheduler_backlog_is_named_from_the_kubeconfig_alone(
    kubeadm_lab: Lab, watches: list[Watch]
) -> None:
    await _no_incident(watches)
    injected = time.monotonic()
    await inject("scheduler-backlog", _target(kubeadm_lab))
    try:
        await _until_cause(watches, "scheduler-backlog", "P2", steps(2), injected)
    finally:
        await recover("scheduler-backlog", _target(kubeadm_lab))


async def test_apf_saturation_is_named_from_the_kubeconfig_alone(
    kubeadm_lab: Lab, watches: list[Watch]
) -> None:
    await _no_incident(watches)
    injected = time.monotonic()
    flood = asyncio.create_task(inject("apf-saturation", _target(kubeadm_lab)))
    try:
        happens_s = steps(1) + APF_FLOOD_S
        await _until_cause(watches, "apf-saturation", "API-429", happens_s, injected)
    finally:
        await flood
        await recover("apf-saturation", _target(kubeadm_lab))


async def test_etcd_leader_loss_is_named_from_the_kubeconfig_alone(
    kubeadm_lab: Lab, watches: list[Watch]
) -> None:
    await _no_incident(watches)
    injected = time.monotonic()
    result = await inject("etcd-leader-loss", _target(kubeadm_lab))
    try:
        await _until_cause(watches, "etcd-leader-loss", "ETCD", ETCD_ELECTION_LIMIT_S, injected)
    finally:
        await recover("etcd-leader-loss", _target(kubeadm_lab), member=result["old_leader"])


async def test_zone_outage_is_named_from_the_kubeconfig_alone(
    kubeadm_lab: Lab, watches: list[Watch]
) -> None:
    await _no_incident(watches)
    injected = time.monotonic()
    await inject("zone-outage", _target(kubeadm_lab), zone="zone-a")
    try:
        down_s = lab_cadence(kubeadm_lab).zone_down_s
        await _until_cause(watches, "zone-outage", "P4", down_s, injected)
    finally:
        await recover("zone-outage", _target(kubeadm_lab), zone="zone-a")


async def test_apiserver_skew_is_named_from_the_kubeconfig_alone(
    kubeadm_lab: Lab, watches: list[Watch]
) -> None:
    # last: the restart it makes stays recent (a SKEW suspect) for ten minutes
    await _no_incident(watches)
    injected = time.monotonic()
    limit_s = COMPONENT_STOP_S + APISERVER_READY_LIMIT_S
    # the load stays on the apiserver that stayed up until the cause is named
    held = inject("apiserver-skew", _target(kubeadm_lab), duration_s=limit_s)
    flood = asyncio.create_task(held)
    try:
        await _until_cause(watches, "apiserver-skew", "SKEW", limit_s, injected)
    finally:
        flood.cancel()  # the scenario ends its load when cancelled (a failure is raised)
        with contextlib.suppress(asyncio.CancelledError):
            await flood
