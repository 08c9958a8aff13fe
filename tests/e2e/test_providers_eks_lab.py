"""A control plane shown to a client as EKS shows one, read with nothing but a kubeconfig.

The kubeadm-like lab with ``eks_layout``: no component pod at all, and the scheduler's
and controller-manager's metrics served through the apiservers by a real aggregated API,
``metrics.eks.amazonaws.com`` (an APIService backed by ``ktop/lab/eks_metrics.py``,
which relays the lab's real components), under the apiservers' authentication and
RBAC, as EKS documents it. A one-shot ``ktop triage`` (docs/rbac.yaml's reader and its
optional role, which grants ``get`` on ``ksh/metrics`` and ``kcm/metrics``) must detect
EKS from that group, read the scheduler through it, say why etcd is not read, give no
incident on the healthy lab, and name an injected scheduler backlog.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ktop.lab import Lab, inject, recover, resolve_target
from ktop.model.events import Component
from ktop.model.providers import EKS, NotExposed
from tests.e2e.cadence import steps
from tests.e2e.helpers import e2e_lab_config, running_lab
from tests.e2e.live import account
from tests.e2e.test_providers_lab import COMPONENTS_ROLE, TRIAGE_LIMIT_S, evidence, one_shot


@pytest.fixture(scope="module")
def eks_lab(binaries_present: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    cfg = replace(e2e_lab_config(), kubeadm_hosts=True, eks_layout=True)
    with running_lab(tmp_path_factory.mktemp("ktop-lab-eks"), cfg) as lab:
        yield lab


@pytest.fixture(scope="module")
def kubeconfig(eks_lab: Lab) -> Path:
    return asyncio.run(account(eks_lab, "ktop-eks", also=(COMPONENTS_ROLE,)))


def test_eks_is_detected_and_its_scheduler_read_through_the_metrics_api(kubeconfig: Path) -> None:
    code, doc = one_shot(kubeconfig)
    assert doc["provider"] == {"name": "eks", "because": "API group metrics.eks.amazonaws.com"}
    for read in ("sched.active_queue", "ha.scheduler_leader"):
        e = evidence(doc, read)
        assert e["status"] != "unknown", e
    etcd = EKS.components[Component.ETCD]
    assert isinstance(etcd, NotExposed)
    has_leader = evidence(doc, "etcd.has_leader")
    assert has_leader["status"] == "unknown" and etcd.why in has_leader["detail"], has_leader
    assert (code, doc["cause"]) == (0, None), doc["headline"]


def test_a_scheduler_backlog_is_named_on_the_eks_layout(eks_lab: Lab, kubeconfig: Path) -> None:
    target = resolve_target(eks_lab.layout.kubeconfig)
    asyncio.run(inject("scheduler-backlog", target))
    try:
        ends = time.monotonic() + steps(2) + TRIAGE_LIMIT_S
        while True:
            code, doc = one_shot(kubeconfig)
            if doc["cause"] and doc["cause"]["id"] == "P2":
                assert code == 1
                break
            assert time.monotonic() < ends, doc["headline"]
    finally:
        asyncio.run(recover("scheduler-backlog", target))
