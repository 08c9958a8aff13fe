"""``ktop snapshot`` against the real control plane: what it prints, and what it says is missing."""

from __future__ import annotations

from typing import Any

import pytest

from ktop.cli import main
from ktop.lab import Lab
from tests.e2e.cadence import (
    DEFAULT_SCRAPE_S,
    PROBE_LIMIT_S,
    cycles,
    deadline,
    lab_cadence,
    steps,
)
from tests.e2e.helpers import nodes, poll, ready_status

TIMEOUT_S = deadline(PROBE_LIMIT_S, steps(2), cycles(1, DEFAULT_SCRAPE_S))
"""ktop snapshot's own wait: connected, the nodes and pods listed, every target scraped
once at ktop's default interval (it stops as soon as each input delivered or failed)."""


def test_snapshot_prints_api_truth_and_names_what_did_not_deliver(
    lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    # an earlier test's outage may still be healing: the truth is read once every node is
    # Ready again, so that it does not change while ktop reads it
    def all_ready() -> list[Any] | None:
        now = nodes(lab)
        return now if all(ready_status(n) == "True" for n in now) else None

    truth = poll(
        all_ready,
        timeout_s=deadline(lab_cadence(lab).zone_back_s),
        what="every node Ready before the snapshot",
    )
    ready = sum(1 for n in truth if ready_status(n) == "True")
    argv = [
        "snapshot",
        "--kubeconfig",
        str(lab.layout.kubeconfig),
        "--timeout",
        f"{TIMEOUT_S:g}",
        "--width",
        "120",
        "--insecure-components",
        "--scheduler-metrics",
        lab.info["scheduler"]["metrics_url"],
        *(f"--apiserver={a['url']}" for a in lab.info["apiservers"]),
        # No --etcd-metrics and no Prometheus: etcd cannot deliver, and must be named.
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert f"{ready:,}/{len(truth):,} ready" in out
    tail = out.split("not delivered:", 1)
    assert len(tail) == 2, out
    assert any(line.strip().startswith("etcd:") for line in tail[1].splitlines()), tail[1]
    # The nodes area delivered: if it is listed at all, only for the controller-manager's
    # zone metrics, which the lab does not serve through a static pod.
    nodes_lines = [ln for ln in tail[1].splitlines() if ln.strip().startswith("nodes:")]
    assert all("controller-manager" in ln and "leases" not in ln for ln in nodes_lines), tail[1]
