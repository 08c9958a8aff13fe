"""Audit logs written by real kube-apiservers, read by ``ktop triage --audit-log`` with
no cluster access: an APF flood that ktop did not watch is named afterwards, with the
client that flooded it.

A small lab of its own (``LabConfig.audit_log``: every request at Metadata level, JSON
lines, in each apiserver's data directory) so the flood leaves no trace in the session
lab. The flood is the lab's ``apf-saturation`` scenario: the low-privilege user put in a
tiny priority level and listing cluster-wide until APF rejects it with 429. No ktop runs
while it happens; afterwards:

- the logs up to the injection name no cause (exit 0) though they hold requests;
- the logs alone name API-429 as the probable cause, and the flooding user as the
  client, on Kubernetes' default FlowSchemas;
- with the cluster's FlowSchemas (read before the scenario's are removed) the client is
  in the scenario's own priority level.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from ktop.lab import Lab, inject, kube, recover, resolve_target
from ktop.lab.config import LOW_USER
from ktop.lab.scenarios_api import APF_NAME
from tests.e2e.cadence import PROCESS_START_S, deadline
from tests.e2e.helpers import e2e_lab_config, running_lab

READ_LIMIT_S = deadline(PROCESS_START_S, 30.0)
"""``ktop triage --audit-log`` of a few megabytes: start, then read every line."""


@pytest.fixture(scope="module")
def audit_lab(binaries_present: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A small lab whose apiservers keep audit logs."""
    cfg = replace(e2e_lab_config(), nodes=30, etcd_members=1, prometheus=False, audit_log=True)
    with running_lab(tmp_path_factory.mktemp("ktop-lab-audit"), cfg) as lab:
        yield lab


def triage(*args: str) -> tuple[int, dict[str, Any]]:
    """``python -m ktop triage ARGS --output json``, with no kubeconfig in reach."""
    done = subprocess.run(
        [sys.executable, "-m", "ktop", "triage", *args, "--output", "json"],
        capture_output=True,
        text=True,
        timeout=READ_LIMIT_S,
        env={**os.environ, "KUBECONFIG": os.devnull},  # no cluster in reach
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


async def _flowschemas(lab: Lab, out: Path) -> None:
    target = resolve_target(lab.layout.kubeconfig)
    async with kube.api_client(target.kubeconfig, target.context) as api:
        listed = await client.FlowcontrolApiserverV1Api(api).list_flow_schema()
        out.write_text(json.dumps(api.sanitize_for_serialization(listed)), encoding="utf-8")


def test_audit_logs_alone_name_the_apf_flood_and_its_client(audit_lab: Lab, tmp_path: Path) -> None:
    info = resolve_target(audit_lab.layout.kubeconfig).info or {}
    logs = [str(p) for p in info["audit_logs"]]
    assert logs and all(Path(p).is_file() for p in logs), logs
    began = time.time()
    target = resolve_target(audit_lab.layout.kubeconfig)
    schemas = tmp_path / "flowschemas.json"
    try:
        flood = asyncio.run(inject("apf-saturation", target))
        assert int(flood["statuses"].get("429", 0)) > 0, flood
        asyncio.run(_flowschemas(audit_lab, schemas))
    finally:
        asyncio.run(recover("apf-saturation", target))

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
