"""An incident ktop did not watch, rebuilt afterwards from what a user already has:
the real kube-apiservers' audit logs (``ktop triage --audit-log``, no cluster access) and
the real Prometheus' history (``ktop record --from-prometheus``, then ``ktop triage
--recording``).

A small lab of its own (``LabConfig.audit_log``: every request at Metadata level, JSON
lines, in each apiserver's data directory; and its Prometheus) so the flood leaves no
trace in the session lab. The incident is the lab's ``apf-saturation`` scenario: the
low-privilege user put in a tiny priority level and listing cluster-wide until APF
rejects it with 429. No ktop runs while it happens; afterwards:

- the audit logs up to the injection name no cause (exit 0) though they hold requests;
- the audit logs alone name API-429 as the probable cause, and the flooding user as the
  client, on Kubernetes' default FlowSchemas; with the cluster's FlowSchemas (read
  before the scenario's are removed) the client is in the scenario's own level;
- a recording rebuilt from Prometheus history over the flood names API-429 at its end,
  as the live dashboard does, and says what history cannot hold.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from ktop.lab import Lab, inject, kube, recover, resolve_target
from ktop.lab.config import CONTEXT, LOW_USER
from ktop.lab.scenarios_api import APF_NAME
from tests.e2e.cadence import (
    PROBE_LIMIT_S,
    PROCESS_START_S,
    REQUEST_LIMIT_S,
    deadline,
    lab_cadence,
)
from tests.e2e.helpers import e2e_lab_config, poll, promql, running_lab

READ_LIMIT_S = deadline(PROCESS_START_S, 30.0)
"""``ktop triage --audit-log`` of a few megabytes: start, then read every line (at about
30,000 lines a second, docs/audit-logs.md)."""
HISTORY_LIMIT_S = deadline(PROCESS_START_S, 60.0)
"""``ktop record --from-prometheus`` of a few minutes: a query per family and minute-long
chunks of one small lab's samples."""


@dataclass(frozen=True)
class Flooded:
    """The lab after its flood: when the flood began, what the flooder got, the cluster's
    FlowSchemas as they were during it."""

    lab: Lab
    began: float
    flood: dict[str, Any]
    flowschemas: Path


@pytest.fixture(scope="module")
def flooded(binaries_present: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flooded]:
    """A small lab whose apiservers keep audit logs, flooded once with no ktop running."""
    cfg = replace(e2e_lab_config(), nodes=30, etcd_members=1, audit_log=True)
    with running_lab(tmp_path_factory.mktemp("ktop-lab-after"), cfg) as lab:
        target = resolve_target(lab.layout.kubeconfig)
        schemas = tmp_path_factory.mktemp("flowschemas") / "flowschemas.json"
        began = time.time()
        try:
            flood = asyncio.run(inject("apf-saturation", target))
            asyncio.run(_flowschemas(lab, schemas))
        finally:
            asyncio.run(recover("apf-saturation", target))
        yield Flooded(lab, began, flood, schemas)


def ktop(*args: str, limit_s: float = READ_LIMIT_S) -> subprocess.CompletedProcess[str]:
    """``python -m ktop ARGS``, with no kubeconfig in reach."""
    return subprocess.run(
        [sys.executable, "-m", "ktop", *args],
        capture_output=True,
        text=True,
        timeout=limit_s,
        env={**os.environ, "KUBECONFIG": os.devnull},  # no cluster in reach
        check=False,
    )


def triage(*args: str) -> tuple[int, dict[str, Any]]:
    """``ktop triage ARGS --output json``: its exit code and report."""
    done = ktop("triage", *args, "--output", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


async def _flowschemas(lab: Lab, out: Path) -> None:
    target = resolve_target(lab.layout.kubeconfig)
    async with kube.api_client(target.kubeconfig, target.context) as api:
        listed = await client.FlowcontrolApiserverV1Api(api).list_flow_schema()
        out.write_text(json.dumps(api.sanitize_for_serialization(listed)), encoding="utf-8")


def test_audit_logs_alone_name_the_apf_flood_and_its_client(flooded: Flooded) -> None:
    info = resolve_target(flooded.lab.layout.kubeconfig).info or {}
    logs = [str(p) for p in info["audit_logs"]]
    assert logs and all(Path(p).is_file() for p in logs), logs
    began, flood, schemas = flooded.began, flooded.flood, flooded.flowschemas
    assert int(flood["statuses"].get("429", 0)) > 0, flood

    code, before = triage("--audit-log", *logs, "--end", str(began))
    assert code == 0 and before["cause"] is None, before["headline"]
    assert before["audit"]["requests"] > 0 and before["audit"]["rejected"] == 0

    code, after = triage("--audit-log", *logs, "--start", str(began))
    assert code == 1 and after["cause"]["id"] == "API-429", after["headline"]
    assert LOW_USER in after["headline"]
    audit = after["audit"]
    # blocking audit backend: every answer the flooder got is in a log once it got it
    assert audit["rejected"] >= int(flood["statuses"]["429"]), (audit["rejected"], flood)
    worst = max(audit["clients"], key=lambda c: c["rejected"])
    assert worst["user"] == LOW_USER and worst["verb"] == "list"

    _, classified = triage(
        "--audit-log", *logs, "--start", str(began), "--flowschemas", str(schemas)
    )
    mine = [c for c in classified["audit"]["clients"] if c["user"] == LOW_USER]
    assert mine and all(c["priority_level"] == APF_NAME for c in mine), mine


def test_prometheus_history_rebuilds_the_flood_as_a_recording(
    flooded: Flooded, tmp_path: Path
) -> None:
    lab, began = flooded.lab, flooded.began
    level = f'priority_level="{APF_NAME}"'

    def rejected() -> float | None:
        got = promql(lab, f"sum(apiserver_flowcontrol_rejected_requests_total{{{level}}})")
        return got[0]["value"] if got and got[0]["value"] > 0 else None

    in_prometheus = deadline(lab_cadence(lab).in_prometheus_s)
    poll(rejected, timeout_s=in_prometheus, what="the flood's rejections in Prometheus")
    end = time.time()
    out = tmp_path / "rebuilt.ktrec"
    prom_url = str(lab.info["prometheus_url"])
    done = ktop(
        "record", "-o", str(out), "--from-prometheus", prom_url,
        "--start", str(began - 60), "--end", str(end),
        limit_s=HISTORY_LIMIT_S,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    code, doc = triage("--recording", str(out))
    assert code == 1 and doc["cause"]["id"] == "API-429", doc["headline"]
    assert doc["source"]["kind"] == "recording"
    p4 = next(p for p in doc["paths"] if p["id"] == "P4")
    unread = [e for e in p4["evidence"] if "rebuilt from Prometheus history" in e["detail"]]
    assert unread and all(e["status"] == "unknown" for e in unread), p4["evidence"]
    # the zones, from the node lifecycle controller's gauges Prometheus holds: all Normal
    zones = next(e for e in p4["evidence"] if e["id"] == "nodes.zone_disruption")
    assert zones["status"] == "ok", zones
    assert "from the node lifecycle controller's metrics" in zones["detail"]
    assert p4["verdict"] == "unknown"  # the Leases were not in history: never clear


def test_with_a_live_cluster_its_own_flowschemas_classify_the_audit_logs(
    flooded: Flooded,
) -> None:
    lab = flooded.lab
    logs = [str(p) for p in (resolve_target(lab.layout.kubeconfig).info or {})["audit_logs"]]
    done = ktop(
        "--kubeconfig", str(lab.layout.kubeconfig), "triage", "--context", CONTEXT,
        "--window", "5", "--audit-log", *logs, "--start", str(flooded.began),
        "--output", "json",
        limit_s=deadline(PROCESS_START_S, PROBE_LIMIT_S, 5.0, REQUEST_LIMIT_S),
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    audit = json.loads(done.stdout)["audit"]
    assert audit["classified_by"] == f"the cluster's FlowSchemas (--context {CONTEXT})"
    # the scenario's FlowSchema was removed at recovery: the cluster now puts the flooder
    # where its default FlowSchemas put any authenticated user
    mine = [c for c in audit["clients"] if c["user"] == LOW_USER]
    assert mine and all(c["priority_level"] == "global-default" for c in mine), mine
