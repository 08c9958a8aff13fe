"""``ktop triage --context`` and ``ktop bundle capture`` on the real control plane.

ktop runs as a ServiceAccount bound to docs/rbac.yaml's ClusterRole. Each injected
scenario must make its path suspect; a healthy lab none; a bundle captured by ktop
and one assembled by hand with kubectl and curl must give the same verdicts.
Every wait polls with a deadline derived from the cadence of what it waits for
(tests/e2e/cadence.py); nothing sleeps for luck. Triage scrapes every
``KTOP_SCRAPE_S`` here, so that each window holds two scrapes of every target or more
however long the first round takes on a busy machine.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktop.analysis.catalogue import API_SKEW
from ktop.lab import Lab, inject, recover, resolve_target
from ktop.lab.binaries import find_binaries
from ktop.lab.util import http_json
from ktop.model.promql import peer_skew
from ktop.sampling import FIRST_ROUND
from ktop.sources.live.timing import BACKFILL_TIMEOUT_S
from tests.e2e.cadence import (
    APF_FLOOD_S,
    APISERVER_READY_LIMIT_S,
    COMPONENT_STOP_S,
    ETCD_ELECTION_LIMIT_S,
    KTOP_SCRAPE_S,
    PROBE_LIMIT_S,
    PROCESS_START_S,
    REQUEST_LIMIT_S,
    cycles,
    deadline,
    lab_cadence,
    steps,
)
from tests.e2e.helpers import e2e_lab_config, poll, promql, running_lab
from tests.e2e.live import account

SCRAPE_GAP_S = 5
"""The bundles' interval between their two scrapes of a target (``--interval``): the window
their rates cover (the hand-made bundle waits it out too; not a deadline)."""
FIRST_ROUND_S = deadline(PROCESS_START_S, PROBE_LIMIT_S, steps(1))
"""Until triage says it scraped every target once: it starts, connects, scrapes."""
TWO_SCRAPES_S = steps(1) + cycles(2, KTOP_SCRAPE_S)
"""From the start of sampling: every target's first scrape, then two more intervals."""
WINDOW_S = TWO_SCRAPES_S
"""The window of a triage that samples a state (no scenario runs during it)."""
HISTORY_LIMIT_S = deadline(PROCESS_START_S, 60.0)
"""``ktop record --from-prometheus`` of a few minutes of the lab, or ``ktop triage
--recording`` of it: start, then a query per family and chunk of one small lab's samples."""
RATE_WINDOW_S = 30
"""The window of Prometheus' request rate the healthy lab's balance is judged on."""


def _inject(lab: Lab, scenario: str, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(inject(scenario, resolve_target(lab.layout.kubeconfig), **kwargs))


def _recover(lab: Lab, scenario: str, **kwargs: Any) -> dict[str, Any]:
    return asyncio.run(recover(scenario, resolve_target(lab.layout.kubeconfig), **kwargs))


@pytest.fixture(scope="module")
def kubeconfig(lab: Lab) -> Path:
    return asyncio.run(account(lab, "ktop-triage"))


def _context(kubeconfig: Path) -> str:
    return str(yaml.safe_load(kubeconfig.read_text())["current-context"])


def _components(lab: Lab) -> list[str]:
    opts = ["--insecure-components"]
    for a in lab.info["apiservers"]:
        opts += ["--apiserver", a["url"]]
    for m in lab.info["etcd"]:
        opts += ["--etcd-metrics", m["metrics_url"]]
    opts += ["--scheduler-metrics", lab.info["scheduler"]["metrics_url"]]
    opts += ["--controller-manager-metrics", lab.info["controller_manager"]["metrics_url"]]
    return opts


def _ktop(*args: str) -> list[str]:
    return [sys.executable, "-m", "ktop", *args]


def _triage_argv(kubeconfig: Path, window_s: float, *more: str) -> list[str]:
    return _ktop(
        "--kubeconfig", str(kubeconfig), "--scrape-interval", f"{KTOP_SCRAPE_S:g}", "triage",
        "--context", _context(kubeconfig), "--window", f"{window_s:g}", "--output", "json",
        *more,
    )  # fmt: skip


def _start_triage(lab: Lab, kubeconfig: Path, window_s: float) -> subprocess.Popen[str]:
    cmd = _triage_argv(kubeconfig, window_s, *_components(lab))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _first_round(proc: subprocess.Popen[str]) -> None:
    """Wait until the sampling triage has scraped every target once (it says so)."""
    assert proc.stderr is not None
    stderr = proc.stderr
    seen: list[str] = []
    said = threading.Event()

    def read() -> None:  # stops reading at the line: the rest is read by _finish
        for line in stderr:
            seen.append(line)
            if FIRST_ROUND in line:
                said.set()
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(FIRST_ROUND_S)
    if said.is_set():
        return
    if reader.is_alive():
        proc.kill()
        proc.wait()
        reader.join()
        pytest.fail(f"triage did not finish its first round in {FIRST_ROUND_S:.0f}s: {seen}")
    pytest.fail(f"triage ended before its first round: {''.join(seen)}")


def _run_s(window_s: float, *, prometheus: bool = False) -> float:
    """A whole triage run: it starts, connects, samples for its window (with Prometheus,
    then waits for the history backfill within its limit), reports, and exits once the
    work in flight at the window's end (a scrape, its parse) has ended within a
    request's time limit."""
    backfill = BACKFILL_TIMEOUT_S if prometheus else 0.0
    return deadline(PROCESS_START_S, PROBE_LIMIT_S, window_s, backfill, REQUEST_LIMIT_S, steps(1))


def _finish(proc: subprocess.Popen[str], window_s: float) -> tuple[int, dict[str, Any]]:
    out, err = proc.communicate(timeout=_run_s(window_s))
    assert proc.returncode in (0, 1), err
    return proc.returncode, json.loads(out)


def _triage(lab: Lab, kubeconfig: Path, window_s: float = WINDOW_S) -> tuple[int, dict[str, Any]]:
    return _finish(_start_triage(lab, kubeconfig, window_s), window_s)


def _verdicts(doc: dict[str, Any]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in doc["paths"]}


def _suspects(doc: dict[str, Any]) -> list[str]:
    return [p["id"] for p in doc["paths"] if p["verdict"] == "suspect"]


def _until_suspect(lab: Lab, kubeconfig: Path, path: str, happens_s: float) -> dict[str, Any]:
    """Triage again and again until ``path`` is suspect: what makes it so happens within
    ``happens_s``, then one more whole run."""
    timeout_s = happens_s + _run_s(WINDOW_S)
    ends = time.monotonic() + timeout_s
    while True:
        code, doc = _triage(lab, kubeconfig)
        if path in _suspects(doc):
            assert code == 1
            return doc
        if time.monotonic() >= ends:
            evidence = next(p["evidence"] for p in doc["paths"] if p["id"] == path)
            pytest.fail(
                f"{path} never suspect within {timeout_s:.0f}s; verdicts {_verdicts(doc)}; "
                f"evidence {evidence}"
            )


@pytest.fixture
def undisturbed_lab(
    binaries_present: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lab]:
    """A lab of the session lab's shape that no other test has touched. The session lab
    is not: its tests restart apiserver-b, load apiserver-a and take zones down, and what
    is left of that (a real skew, a zone still healing) is not a healthy cluster. The lab
    places its clients 2:1 on its two apiservers (three zones' KWOKs): about 1.3x skew.
    """
    with running_lab(tmp_path_factory.mktemp("ktop-lab-undisturbed"), e2e_lab_config()) as fresh:
        yield fresh


def test_healthy_lab_reports_no_suspect_path(undisturbed_lab: Lab) -> None:
    """A healthy lab triages to no suspect path, exit 0.

    Slow: it waits for the lab's own cadences before triaging (an earlier test's zone to be
    healthy again as the node lifecycle controller counts it, the apiservers' load to leave
    the rate window, their first object size estimate, polled every minute with jitter),
    then runs the triage window: up to about two minutes on a loaded two-core machine.
    """
    lab = undisturbed_lab
    cadence = lab_cadence(lab)
    kubeconfig = asyncio.run(account(lab, "ktop-triage"))
    # The node lifecycle controller, as Prometheus has it, counts no unhealthy node (a
    # node that went Unknown while the lab started is brought back as a zone is).
    poll(
        lambda: promql(
            lab, 'sum(node_collector_unhealthy_nodes_in_zone{job="kube-controller-manager"}) == 0'
        ),
        timeout_s=deadline(cadence.zone_back_s, cadence.in_prometheus_s),
        what="no unhealthy node in any zone, as Prometheus has it",
        every_s=2.0,
    )
    # Prometheus must agree that the lab is balanced enough, over the last 30 s.
    per_instance = {
        "requests": (
            "sum by (instance) "
            f'(rate(apiserver_request_total{{job="apiserver"}}[{RATE_WINDOW_S}s]))'
        ),
        "watches": (
            'sum by (instance) (apiserver_longrunning_requests{job="apiserver",verb="WATCH"})'
        ),
    }
    # What the lab's start set going (within its start limit) has left the rate's window.
    balanced = deadline(cadence.start_s, cycles(1, RATE_WINDOW_S), cadence.in_prometheus_s)
    for what, q in per_instance.items():
        poll(
            functools.partial(promql, lab, f"{peer_skew(q)} < {API_SKEW.warn}"),
            timeout_s=balanced,
            what=f"{what} skew across apiservers under {API_SKEW.warn}x, as Prometheus has it",
            every_s=2.0,
        )
    # A freshly started apiserver exposes 0 for resources it has not estimated yet
    # (ktop reports those as not estimated); wait until every instance has sized nodes.
    poll(
        lambda: promql(lab, 'min(apiserver_resource_size_estimate_bytes{resource="nodes"}) > 0'),
        timeout_s=deadline(cadence.size_estimate_s, cadence.in_prometheus_s),
        what="the apiservers' first size estimate of nodes",
        every_s=2.0,
    )
    code, doc = _triage(lab, kubeconfig)
    assert _suspects(doc) == [], json.dumps([p for p in doc["paths"] if p["verdict"] == "suspect"])
    assert code == 0
    assert doc["source"]["kind"] == "live"
    assert doc["signals"]["nodes"]["total"] > 0 and doc["signals"]["nodes"]["not_ready"] == 0
    assert len(doc["signals"]["etcd"]) == len(lab.info["etcd"])
    # full-LIST sizes as the apiserver estimates them (the lab runs 1.35), largest first
    sizes = [c for c in doc["capacity"] if c["id"].startswith("full_list_bytes.")]
    assert sizes and all("apiserver_resource_size_estimate_bytes" in c["detail"] for c in sizes)
    values = [c["value"] for c in sizes]
    assert values == sorted(values, reverse=True) and values[0] > 0
    nodes = [c for c in sizes if c["id"] == "full_list_bytes.nodes"]
    if nodes:  # among the ten largest: its object count is the nodes listed
        assert f"of {doc['signals']['nodes']['total']} objects" in nodes[0]["detail"]


def _kubectl_bundle(lab: Lab, kubeconfig: Path, root: Path) -> None:
    """What a user would do by hand: kubectl for the lists, curl for metrics and dumps
    (each one request: a step)."""
    one = deadline(steps(1))
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    kubectl = find_binaries().kubectl  # built with the components, same version
    (root / "api").mkdir(parents=True)
    for res in (
        "nodes", "pods", "events", "leases", "flowschemas", "prioritylevelconfigurations",
        "endpointslices", "resourcequotas",
    ):  # fmt: skip
        with (root / "api" / f"{res}.json").open("w") as f:
            subprocess.run(
                [kubectl, "get", res, "-A", "-o", "json"],
                stdout=f,
                env=env,
                check=True,
                timeout=one,
            )
    token = subprocess.run(
        [kubectl, "config", "view", "--raw", "-o", "jsonpath={.users[0].user.token}"],
        env=env, capture_output=True, text=True, check=True, timeout=one,
    ).stdout  # fmt: skip
    targets = [("apiserver", a["url"], f"{a['url']}/metrics", True) for a in lab.info["apiservers"]]
    targets += [("etcd", m["metrics_url"], m["metrics_url"], False) for m in lab.info["etcd"]]
    for comp in ("scheduler", "controller_manager"):
        url = lab.info[comp]["metrics_url"]
        targets.append((comp.replace("_", "-"), url, url, True))
    dump = "/debug/api_priority_and_fairness/dump_priority_levels"
    for i in range(2):
        if i:
            time.sleep(SCRAPE_GAP_S)  # two scrapes give rates: the gap is the window
        at = int(time.time())
        for comp, base, url, auth in targets:
            inst = base.split("//", 1)[-1].split("/", 1)[0]
            out = root / "metrics" / comp / inst / f"{at}.prom"
            out.parent.mkdir(parents=True, exist_ok=True)
            hdr = ["-H", f"Authorization: Bearer {token}"] if auth else []
            subprocess.run(["curl", "-sfk", *hdr, "-o", str(out), url], check=True, timeout=one)
        for a in lab.info["apiservers"]:
            inst = a["url"].split("//", 1)[-1]
            out = root / "apf" / inst / f"{at}.txt"
            out.parent.mkdir(parents=True, exist_ok=True)
            bearer = ["-H", f"Authorization: Bearer {token}"]
            subprocess.run(
                ["curl", "-sfk", *bearer, "-o", str(out), a["url"] + dump], check=True, timeout=one
            )


def _bundle_verdicts(root: Path) -> tuple[dict[str, str], dict[str, Any]]:
    done = subprocess.run(
        _ktop("triage", "--bundle", str(root), "--output", "json"),
        capture_output=True,
        text=True,
        check=False,
        # it starts, parses two rounds of every target's metrics (a request's worth of
        # work each at most) and reports
        timeout=deadline(PROCESS_START_S, REQUEST_LIMIT_S, steps(1)),
    )
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert doc["errors"] == []
    return _verdicts(doc), doc


def _captured_and_by_hand(lab: Lab, kubeconfig: Path, tmp: Path) -> tuple[dict[str, Any], ...]:
    captured = tmp / "captured"
    # it starts, connects, scrapes every target twice SCRAPE_GAP_S apart, lists objects
    capture_s = deadline(
        PROCESS_START_S, PROBE_LIMIT_S, cycles(2, SCRAPE_GAP_S), REQUEST_LIMIT_S, steps(1)
    )
    done = subprocess.run(
        _ktop(
            "--kubeconfig", str(kubeconfig), "bundle", "capture", "--context",
            _context(kubeconfig), "--interval", str(SCRAPE_GAP_S), *_components(lab),
            str(captured),
        ),
        capture_output=True, text=True, check=False, timeout=capture_s,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "not captured" not in done.stderr, done.stderr
    by_hand = tmp / "by-hand"
    _kubectl_bundle(lab, kubeconfig, by_hand)
    a, doc_a = _bundle_verdicts(captured)
    b, doc_b = _bundle_verdicts(by_hand)
    assert a == b, {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
    return doc_a, doc_b


def test_captured_and_hand_assembled_bundles_agree(
    lab: Lab, kubeconfig: Path, tmp_path: Path
) -> None:
    doc, hand = _captured_and_by_hand(lab, kubeconfig, tmp_path)

    def zones(d: dict[str, Any]) -> list[tuple[Any, ...]]:
        # Lease lag differs with the moment each bundle was taken; counts and states must not.
        n = d["signals"]["nodes"]
        return [
            (n["total"], n["not_ready"]),
            *sorted((z["zone"], z["total"], z["not_ready"], z["state"]) for z in n["zones"]),
        ]

    assert zones(doc) == zones(hand)
    assert sorted(r["instance"] for r in doc["signals"]["etcd"]) == sorted(
        r["instance"] for r in hand["signals"]["etcd"]
    )
    assert all(isinstance(r["window"], int | float) for r in doc["signals"]["etcd"])


def test_scheduler_backlog_makes_p2_suspect(lab: Lab, kubeconfig: Path) -> None:
    _inject(lab, "scheduler-backlog")
    try:
        # steps: the scheduler's first attempt at each pod and its status writes
        doc = _until_suspect(lab, kubeconfig, "P2", happens_s=steps(2))
        p2 = next(p for p in doc["paths"] if p["id"] == "P2")
        assert "no resources fit" in p2["conclusion"]
        assert doc["signals"]["scheduler"]["pending_by_reason"]
    finally:
        _recover(lab, "scheduler-backlog")


def test_apf_saturation_makes_api_429_suspect(lab: Lab, kubeconfig: Path) -> None:
    # sampling goes on through the flood (its objects written: a step) and two scrapes after
    window_s = TWO_SCRAPES_S + steps(1) + APF_FLOOD_S
    proc = _start_triage(lab, kubeconfig, window_s)
    _first_round(proc)
    try:
        _inject(lab, "apf-saturation")
        _, doc = _finish(proc, window_s)
    finally:
        _recover(lab, "apf-saturation")
    assert "API-429" in _suspects(doc), _verdicts(doc)
    rows = [r for r in doc["signals"]["apf"] if r["priority_level"] == "ktop-lab-low"]
    assert rows and max(r["rejected_per_s"] or 0 for r in rows) > 0


def test_apiserver_skew_makes_skew_suspect(lab: Lab, kubeconfig: Path, tmp_path: Path) -> None:
    """A triage sampling across apiserver-b's restart and the load left on apiserver-a
    makes SKEW suspect, with the watch skew past its critical limit, the restart in its
    evidence and in the timeline at the start time Prometheus scraped; afterwards, with
    ktop not watching, the span rebuilt from Prometheus history makes SKEW suspect at the
    moment the live triage ended (the load still held).

    Slow: triage samples a fixed window of two scrapes, the stop and the restarted
    apiserver's ready limit (157 s), longer than the 90 s limit by itself; the load is
    held that long again after the restart, so that it outlasts the window; then the
    rebuild from history and its triage (two processes, a few seconds each).
    """
    # The scenario restarts apiserver-b and, as the clients that failed over would, holds
    # watches and requests on apiserver-a: sample across it (b stopped, then ready again
    # within the scenario's limit) and two scrapes after, the load held past the window.
    window_s = TWO_SCRAPES_S + COMPONENT_STOP_S + APISERVER_READY_LIMIT_S
    proc = _start_triage(lab, kubeconfig, window_s)
    _first_round(proc)
    began = time.time()
    with ThreadPoolExecutor(1) as pool:  # triage's output is read while the load holds
        injected = pool.submit(_inject, lab, "apiserver-skew", duration_s=window_s)
        _, doc = _finish(proc, window_s)
        held_at = time.time()
        result = injected.result()
    skew = next(p for p in doc["paths"] if p["id"] == "SKEW")
    assert skew["verdict"] == "suspect", skew
    ids = {e["id"]: e for e in skew["evidence"]}
    # a rolling restart's skew: apiserver-a holds nearly every watch, past the critical
    # limit, and serves most requests
    assert result["watches_held"] > 0, result
    watch = ids["api.watch_skew"]
    assert watch["status"] == "bad" and watch["value"] > API_SKEW.critical, watch
    held = next(a["url"] for a in lab.info["apiservers"] if a["name"] == "apiserver-a")
    assert watch["detail"].split(": ", 1)[1].startswith(held.split("//", 1)[1]), watch
    assert ids["api.request_skew"]["status"] in ("warn", "bad"), ids["api.request_skew"]
    assert ids["api.recent_restart"]["status"] == "warn"
    assert (
        "apiserver-b" in ids["api.recent_restart"]["detail"]
        or "127.0.0.1" in (ids["api.recent_restart"]["detail"])
    )
    # the incident timeline has the restart at the process start time Prometheus scraped
    started = _prom_query(
        str(lab.info["prometheus_url"]), 'process_start_time_seconds{job="apiserver"}', time.time()
    )
    restarted_at = max(started.values())
    restarts = [e for e in doc["timeline"] if e["kind"] == "restart"]
    assert any(abs(e["at"] - restarted_at) < 1.0 for e in restarts), (restarted_at, restarts)
    # after the fact: the watches and requests per instance, as Prometheus kept them
    rebuilt = _from_history(lab, began - 60, tmp_path / "skew.ktrec", at=held_at)
    assert "SKEW" in _suspects(rebuilt), _verdicts(rebuilt)


def test_etcd_leader_loss_makes_etcd_suspect(lab: Lab, kubeconfig: Path, tmp_path: Path) -> None:
    """A triage sampling across the etcd leader's loss makes ETCD suspect, with the
    election in the timeline; afterwards, with ktop not watching, the same span rebuilt
    from Prometheus history makes ETCD suspect too.

    Slow: triage samples a fixed window of two scrapes and the election's limit (87 s);
    with the process's start and the old leader's restart afterwards, over 90 s; then the
    rebuild from history and its triage (two processes, a few seconds each).
    """
    # sampling goes on through the election (within the scenario's limit) and two scrapes
    window_s = TWO_SCRAPES_S + ETCD_ELECTION_LIMIT_S
    proc = _start_triage(lab, kubeconfig, window_s)
    _first_round(proc)
    began = time.time()
    result = _inject(lab, "etcd-leader-loss")
    try:
        _, doc = _finish(proc, window_s)
    finally:
        _recover(lab, "etcd-leader-loss", member=result["old_leader"])
    assert "ETCD" in _suspects(doc), _verdicts(doc)
    # the timeline has the election: a member that was not the leader became it, or the
    # members saw no leader
    leader = [e for e in doc["timeline"] if e["kind"] == "leader"]
    assert any(e["text"] in ("became the etcd leader", "no etcd leader") for e in leader), leader
    # after the fact: the members' leader changes, as Prometheus kept them
    rebuilt = _from_history(lab, began - 60, tmp_path / "leader-loss.ktrec")
    assert "ETCD" in _suspects(rebuilt), _verdicts(rebuilt)
    assert rebuilt["source"]["kind"] == "recording"


def _from_history(lab: Lab, start: float, out: Path, at: float | None = None) -> dict[str, Any]:
    """``ktop record --from-prometheus`` from ``start`` to now (once the last scrapes are
    in Prometheus), then ``ktop triage --recording`` at ``at`` (default its end): the
    report."""
    end = time.time()
    poll(
        lambda: promql(lab, f"max(timestamp(up)) >= {end:.3f}") or None,
        timeout_s=deadline(lab_cadence(lab).in_prometheus_s),
        what="the span's last scrapes in Prometheus",
        every_s=1.0,
    )
    argv = [
        sys.executable, "-m", "ktop", "record", "-o", str(out),
        "--from-prometheus", str(lab.info["prometheus_url"]),
        "--start", f"{start:.0f}", "--end", f"{end:.0f}",
    ]  # fmt: skip
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=HISTORY_LIMIT_S,
        env={**os.environ, "KUBECONFIG": os.devnull},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    when = [] if at is None else ["--at", f"{at:.0f}"]
    triaged = subprocess.run(
        [sys.executable, "-m", "ktop", "triage", "--recording", str(out), *when,
         "--output", "json"],
        capture_output=True, text=True, check=False, timeout=HISTORY_LIMIT_S,
    )  # fmt: skip
    assert triaged.returncode in (0, 1), triaged.stderr
    return dict(json.loads(triaged.stdout))


def test_zone_outage_makes_p4_suspect_and_names_the_zone(lab: Lab, kubeconfig: Path) -> None:
    _inject(lab, "zone-outage", zone="zone-a")
    try:
        doc = _until_suspect(lab, kubeconfig, "P4", happens_s=lab_cadence(lab).zone_down_s)
        p4 = next(p for p in doc["paths"] if p["id"] == "P4")
        assert "zone zone-a" in p4["conclusion"], p4["conclusion"]
    finally:
        _recover(lab, "zone-outage", zone="zone-a")


def _prom_query(url: str, query: str, at: float) -> dict[str, float]:
    qs = urllib.parse.urlencode({"query": query, "time": f"{at:.3f}"})
    data: dict[str, Any] = http_json(f"{url}/api/v1/query?{qs}")
    assert data.get("status") == "success", data
    return {r["metric"].get("instance", ""): float(r["value"][1]) for r in data["data"]["result"]}


def test_prometheus_history_is_the_baseline_of_a_short_sample(lab: Lab, kubeconfig: Path) -> None:
    """With --prometheus a short sample already compares with the cluster's normal: the
    backfilled last hour (15 s steps), whose median Prometheus computes itself."""
    prom = str(lab.info["prometheus_url"])
    rate = 'sum by (instance) (rate(process_cpu_seconds_total{job="apiserver"}[300s]))'
    # more than ten 15 s steps older than a minute: Prometheus must hold 4 minutes with a
    # scrape of every apiserver in each 15 s step (a busy Prometheus skips some of its
    # scrapes; the backfill's steps need one each)
    held_s, step_s, scrape_s = 240, 15, lab_cadence(lab).scrape_s

    def held() -> bool:
        now = time.time()
        oldest = _prom_query(prom, "prometheus_tsdb_head_min_time", now)
        per_step = _prom_query(prom, f"count_over_time(up{{job='apiserver'}}[{held_s}s])", now)
        return (
            bool(oldest)
            and now - min(oldest.values()) / 1000 >= held_s
            and min(per_step.values(), default=0) >= held_s / step_s
        )

    poll(
        held,
        timeout_s=deadline(cycles(held_s / scrape_s, scrape_s)),
        what="4 minutes of apiserver scrapes in Prometheus",
    )
    started = time.time()
    cmd = _triage_argv(kubeconfig, WINDOW_S, "--prometheus", prom, *_components(lab))
    timeout = _run_s(WINDOW_S, prometheus=True)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert doc["baseline"].startswith("Prometheus history, last "), doc["baseline"]
    cpu = next(p for p in doc["paths"] if p["id"] == "API-CPU")
    ev = next(e for e in cpu["evidence"] if e["id"] == "api.cpu_vs_baseline")
    assert ev["status"] != "unknown", ev
    assert "Prometheus history" in ev["detail"]
    # The median ktop used (the reading / the ratio) against Prometheus' own median of the
    # same rate over the hour up to a minute before the snapshot. The snapshot falls
    # between the start and the end of the run, and Prometheus' subquery steps fall a few
    # seconds off the backfill's: its medians at both ends bracket ktop's.
    finished = time.time()
    inst = ev["detail"].split(": ", 1)[0]
    now = {r["instance"]: r["cpu_cores"] for r in doc["signals"]["apiservers"]}
    used = now[inst] / ev["value"]
    ends = [
        _prom_query(prom, f"quantile_over_time(0.5, ({rate})[3540s:15s])", t - 60)[inst]
        for t in (started, finished)
    ]
    assert min(ends) * 0.75 <= used <= max(ends) * 1.25, (ev, ends, now)
