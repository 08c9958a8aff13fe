"""A control plane laid out as OpenShift lays one out, read with nothing but a kubeconfig.

The kubeadm-like lab (``ktop/lab/hosts.py``) with ``openshift_layout``: the components'
pods in OpenShift's namespaces with OpenShift's labels and names, the scheduler's Lease
in its own namespace, the scheduler's and controller-manager's ports from a config file
(not on their command lines), and the ``config.openshift.io`` group served by its real
ClusterVersion CRD. A one-shot ``ktop triage`` (docs/rbac.yaml's reader and its optional
role) must detect OpenShift from that group, read the scheduler and controller-manager
where OpenShift keeps them, say why etcd is not read (its metrics need etcd's client
certificate on OpenShift), give no incident on the healthy lab, and name an injected
scheduler backlog.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ktop.commands.triage import DEFAULT_WINDOW_S
from ktop.lab import Lab, inject, recover, resolve_target
from ktop.model.events import Component
from ktop.model.providers import OPENSHIFT, NotExposed
from tests.e2e.cadence import PROBE_LIMIT_S, PROCESS_START_S, REQUEST_LIMIT_S, deadline, steps
from tests.e2e.helpers import e2e_lab_config, running_lab
from tests.e2e.live import account

COMPONENTS_ROLE = "ktop-components"
TRIAGE_LIMIT_S = deadline(PROCESS_START_S, PROBE_LIMIT_S, DEFAULT_WINDOW_S, REQUEST_LIMIT_S)
"""How long one ``ktop triage`` may take: start, reach the cluster, its window, a request."""


@pytest.fixture(scope="module")
def openshift_lab(
    binaries_present: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lab]:
    cfg = replace(e2e_lab_config(), kubeadm_hosts=True, openshift_layout=True)
    with running_lab(tmp_path_factory.mktemp("ktop-lab-openshift"), cfg) as lab:
        yield lab


@pytest.fixture(scope="module")
def kubeconfig(openshift_lab: Lab) -> Path:
    return asyncio.run(account(openshift_lab, "ktop-openshift", also=(COMPONENTS_ROLE,)))


def one_shot(kubeconfig: Path) -> tuple[int, dict[str, Any]]:
    """``ktop --kubeconfig K triage --output json``, as a user runs it."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ktop",
            "--kubeconfig",
            str(kubeconfig),
            "triage",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=TRIAGE_LIMIT_S,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def evidence(doc: dict[str, Any], evidence_id: str) -> dict[str, Any]:
    """One evidence of the report, by id (the first path that carries it)."""
    return next(e for p in doc["paths"] for e in p["evidence"] if e["id"] == evidence_id)


def test_openshift_is_detected_and_read_where_it_keeps_its_components(kubeconfig: Path) -> None:
    code, doc = one_shot(kubeconfig)
    assert doc["provider"] == {"name": "openshift", "because": "API group config.openshift.io"}
    # the scheduler's queues and its leader, read through the pod proxy in
    # openshift-kube-scheduler (the port from the default: no flag names it)
    for read in ("sched.active_queue", "ha.scheduler_leader"):
        e = evidence(doc, read)
        assert e["status"] != "unknown", e
    # etcd is not read, and the pane says why and where else to look
    etcd = OPENSHIFT.components[Component.ETCD]
    assert isinstance(etcd, NotExposed)
    has_leader = evidence(doc, "etcd.has_leader")
    assert has_leader["status"] == "unknown" and etcd.why in has_leader["detail"], has_leader
    # a healthy lab: no incident
    assert (code, doc["cause"]) == (0, None), doc["headline"]


def test_a_scheduler_backlog_is_named_on_the_openshift_layout(
    openshift_lab: Lab, kubeconfig: Path
) -> None:
    target = resolve_target(openshift_lab.layout.kubeconfig)
    asyncio.run(inject("scheduler-backlog", target))
    try:
        # the scheduler's first attempt at each pod and its status writes (two steps), then
        # one more whole triage
        ends = time.monotonic() + steps(2) + TRIAGE_LIMIT_S
        while True:
            code, doc = one_shot(kubeconfig)
            if doc["cause"] and doc["cause"]["id"] == "P2":
                assert code == 1
                break
            assert time.monotonic() < ends, doc["headline"]
    finally:
        asyncio.run(recover("scheduler-backlog", target))
