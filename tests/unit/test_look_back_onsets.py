"""A one-shot dates what it did not watch begin: a zone's disruption by its NotReady
nodes' Ready transitions, an apiserver's restart by its own start time within the
look-back, and leader changes counted since an etcd member started by that start. The
expected times are the inputs' own (the transitions the test writes, the dumps'
``process_start_time_seconds`` read by prometheus_client's parser), never ktop's.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ktop.analysis.trends import Direction, Trend
from ktop.analysis.triage.diagnosis import diagnose
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Evidence, PathResult, Role, Status, Verdict
from ktop.cli import main
from ktop.model.events import Area
from ktop.model.text import fmt_clock
from tests.unit.bundles import (
    T0,
    apiserver_text,
    etcd_text,
    iso,
    lease,
    node,
    write_list,
    write_metrics,
)
from tests.unit.test_look_back import CHANGES, LEADER, _independent, _members, _samples

DT = 60
FAST = [("0.005", 90), ("0.02", 100), ("0.1", 100), ("+Inf", 100)]
OUTAGE = T0 - 45
"""When the synthetic zone's nodes begin to go NotReady: 105 s before the last scrape."""
STEP = 4
"""Seconds between two nodes' Ready transitions."""


def _triage_json(root: Path, *extra: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["triage", "--bundle", str(root), "--output", "json", *extra])
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def _control_plane(root: Path, apiserver_start: float) -> None:
    for i, t in enumerate((T0, T0 + DT)):
        write_metrics(root, "etcd", "etcd-0", t, etcd_text(changes=1, fsync=FAST))
        for name in ("apiserver-a", "apiserver-b"):
            start = apiserver_start if name == "apiserver-b" else T0 - 86400
            text = apiserver_text(requests=1000 + 600 * i, rejected=0, queued=0, wait=FAST, start=0)
            # every digit of the start (the helper's %g keeps six)
            text = text.replace(
                "process_start_time_seconds 0\n", f"process_start_time_seconds {start:.0f}\n"
            )
            write_metrics(root, "apiserver", name, t, text)


def _zone_outage(root: Path, down: int) -> list[float]:
    """zone-a: 10 nodes, ``down`` of them Unknown, their Ready transitions ``STEP`` s
    apart from ``OUTAGE`` (written out of order); zone-b and zone-c healthy. Returns the
    transition times written."""
    nodes, leases, times = [], [], []
    for zone in ("zone-a", "zone-b", "zone-c"):
        for i in range(10):
            name = f"{zone}-node-{i:03d}"
            bad = zone == "zone-a" and i < down
            n = node(name, zone, "Unknown" if bad else "True")
            if bad:
                at = OUTAGE + STEP * ((i * 7) % down)  # a permutation of 0..down-1
                n["status"]["conditions"][0]["lastTransitionTime"] = iso(at)
                times.append(float(at))
            nodes.append(n)
            leases.append(lease(name, T0 + DT - (60 if bad else 5)))
    write_list(root, "nodes", "NodeList", nodes)
    write_list(root, "leases", "LeaseList", leases)
    return times


def _path(doc: dict[str, Any], pid: str) -> dict[str, Any]:
    return next(p for p in doc["paths"] if p["id"] == pid)


def _evidence(path: dict[str, Any], eid: str) -> dict[str, Any]:
    return next(e for e in path["evidence"] if e["id"] == eid)


# ------------------------------------------------------------ a zone's disruption


@pytest.mark.parametrize("down", [6, 10])
def test_a_zone_outage_is_dated_by_its_nodes_ready_transitions(tmp_path: Path, down: int) -> None:
    """kube-controller-manager's rule: more than 2 not ready and at least 55 % of the
    zone's 10 nodes: 6 (5 of 10 is 50 %). The zone was in disruption from the sixth
    transition on, whether 6 or all 10 are down now."""
    _control_plane(tmp_path, T0 - 86400)
    times = _zone_outage(tmp_path, down)
    sixth = sorted(times)[5]
    assert sixth == OUTAGE + 5 * STEP
    doc = _triage_json(tmp_path)
    p4 = _path(doc, "P4")
    assert p4["verdict"] == "suspect" and p4["onset"] == sixth
    disruption = _evidence(p4, "nodes.zone_disruption")
    assert (
        f"zone-a {'Full' if down == 10 else 'Partial'}Disruption since {fmt_clock(sixth)} UTC"
        in (disruption["detail"])
    )


def test_too_few_transitions_to_reach_disruption_give_no_onset(tmp_path: Path) -> None:
    _control_plane(tmp_path, T0 - 86400)
    _zone_outage(tmp_path, 5)
    p4 = _path(_triage_json(tmp_path), "P4")
    assert (
        p4["verdict"] != "suspect"
        and " since " not in _evidence(p4, "nodes.zone_disruption")["detail"]
    )


# ------------------------------------------------------------ restarts within the look-back


def test_an_apiserver_started_within_the_look_back_restarted_within_it(tmp_path: Path) -> None:
    start = T0 - 100  # 160 s before the last scrape
    _control_plane(tmp_path, start)
    _zone_outage(tmp_path, 0)
    restart = _evidence(_path(_triage_json(tmp_path), "SKEW"), "api.recent_restart")
    assert restart["status"] == "warn" and restart["value"] == T0 + DT - start
    assert restart["detail"] == (
        f"apiserver-b started at {fmt_clock(start)} UTC, 160 s before the snapshot: "
        "a restart within the 15m look-back"
    )
    assert restart["trend"]["since"] == start and not restart["trend"]["since_before_history"]


def test_a_start_before_the_look_back_is_no_restart_within_it(tmp_path: Path) -> None:
    """The same start judged over a 60 s look-back: the bundle's window is its scrapes'
    60 s and a minute more (120 s), and the start is 160 s back."""
    start = T0 - 100
    _control_plane(tmp_path, start)
    _zone_outage(tmp_path, 0)
    doc = _triage_json(tmp_path, "--look-back", "60")
    restart = _evidence(_path(doc, "SKEW"), "api.recent_restart")
    assert restart["status"] == "ok" and restart["detail"].endswith("before the 2.0m look-back")


# ------------------------------------------------------------ leader changes since a start


def _since_start_etcd() -> tuple[PathResult, float]:
    started = _independent(LEADER, "process_start_time_seconds")
    scrapes = [(started + 300.0 + 5.0 * i, _samples(LEADER, changes=2.0)) for i in range(3)]
    report = triage(_members(scrapes, members=2))
    return next(p for p in report.paths if p.id == "ETCD"), started


def test_changes_since_a_start_date_etcd_at_that_start() -> None:
    """Each change a member counted since it started happened at or after that start."""
    etcd, started = _since_start_etcd()
    changes = next(e for e in etcd.evidence if e.id == "etcd.leader_changes")
    assert changes.status is Status.WARN and changes.trend is not None
    assert changes.trend.since == started and etcd.onset == started
    assert _independent(LEADER, CHANGES) == 1.0  # the dump itself: its first leader only


def test_etcd_dated_by_a_start_ranks_before_a_skew_seen_only_by_ktop() -> None:
    """A skew whose history begins with ktop's first frame (breaching from it on) began
    no later than that frame, which is after the start: ETCD is the probable cause."""
    etcd, started = _since_start_etcd()
    first_frame = started + 300.0
    skew_evidence = Evidence(
        "api.request_skew", "skew", Status.WARN, 2.0, "x", "max / mean 2.0x", True,
        Area.APISERVERS, suspect=True, signal="api.request_skew",
        trend=Trend(first_frame, True, Direction.UNKNOWN, None),
    )  # fmt: skip
    skew = PathResult("SKEW", "skew", Verdict.SUSPECT, (skew_evidence,), "", "")
    ranked = diagnose([replace(skew), etcd])
    assert [(p.id, p.role) for p in ranked] == [("ETCD", Role.CAUSE), ("SKEW", Role.INDEPENDENT)]
