"""Control planes laid out as OpenShift and EKS lay theirs out, read with nothing but a
kubeconfig.

The kubeadm-like lab (``ktop/lab/hosts.py``) in two layouts, one lab at a time:

- ``openshift_layout``: the components' pods in OpenShift's namespaces with OpenShift's
  labels and names, the scheduler's Lease in its own namespace, the scheduler's and
  controller-manager's ports from a config file (not on their command lines), and the
  ``config.openshift.io`` group served by its real ClusterVersion CRD;
- ``eks_layout``: no component pod at all, and the scheduler's and controller-manager's
  metrics served through the apiservers by a real aggregated API,
  ``metrics.eks.amazonaws.com`` (an APIService backed by ``ktop/lab/eks_metrics.py``,
  which relays the lab's real components), under the apiservers' authentication and
  RBAC, as EKS documents it.

A one-shot ``ktop triage`` (docs/rbac.yaml's reader and its optional role) must detect
the provider from its API group, read the scheduler where that provider keeps it, say
why etcd is not read there, give no incident on the healthy lab, and name an injected
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
from kubernetes_asyncio import client

from ktop.lab import Lab, inject, kube, recover, resolve_target
from ktop.lab.openshift_monitoring import VIEW_ROLE
from ktop.model.events import Component
from ktop.model.providers import EKS, OPENSHIFT, NotExposed, ProviderProfile
from ktop.sampling import LOOK_BACK_PROMETHEUS
from tests.e2e.cadence import steps
from tests.e2e.helpers import KUBEADM_GROUP, e2e_lab_config, running_lab
from tests.e2e.live import SA_NAMESPACE, account
from tests.e2e.test_triage_truth import COMPONENTS_ROLE, TRIAGE_LIMIT_S, one_shot

XDIST_GROUP = KUBEADM_GROUP
"""Its labs are laid out as kubeadm lays one out: a worker of their own (tests/e2e/conftest.py)."""

LAYOUTS: dict[str, tuple[dict[str, bool], ProviderProfile, str]] = {
    "openshift": ({"openshift_layout": True}, OPENSHIFT, "API group config.openshift.io"),
    "eks": ({"eks_layout": True}, EKS, "API group metrics.eks.amazonaws.com"),
}
"""Each layout: the lab's switch, the profile ktop must use, and what must name it."""


@pytest.fixture(scope="module", params=list(LAYOUTS))
def provider_lab(
    request: pytest.FixtureRequest,
    binaries_present: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, Lab, Path]]:
    """One layout's lab and a reader's kubeconfig (one lab at a time: the module's tests
    run layout by layout)."""
    name: str = request.param
    layout = LAYOUTS[name][0]
    cfg = replace(
        e2e_lab_config(),
        kubeadm_hosts=True,
        openshift_layout=layout.get("openshift_layout", False),
        eks_layout=layout.get("eks_layout", False),
    )
    with running_lab(tmp_path_factory.mktemp(f"ktop-lab-{name}"), cfg) as lab:
        kubeconfig = asyncio.run(account(lab, f"ktop-{name}", also=(COMPONENTS_ROLE,)))
        yield name, lab, kubeconfig


def triaged(kubeconfig: Path) -> tuple[int, dict[str, Any]]:
    """``ktop --kubeconfig K triage --output json``, as a user runs it: exit code, report."""
    t = asyncio.run(one_shot(kubeconfig))
    return t.code, t.doc


def evidence(doc: dict[str, Any], evidence_id: str) -> dict[str, Any]:
    """One evidence of the report, by id (the first path that carries it)."""
    return next(e for p in doc["paths"] for e in p["evidence"] if e["id"] == evidence_id)


def test_the_provider_is_detected_and_read_where_it_keeps_its_components(
    provider_lab: tuple[str, Lab, Path],
) -> None:
    name, _, kubeconfig = provider_lab
    _, profile, because = LAYOUTS[name]
    code, doc = triaged(kubeconfig)
    assert doc["provider"] == {"name": profile.provider.value, "because": because}
    # the scheduler's queues and its leader, read where the provider keeps them
    for read in ("sched.active_queue", "ha.scheduler_leader"):
        e = evidence(doc, read)
        assert e["status"] != "unknown", e
    # etcd is not read, and the pane says why and where else to look
    etcd = profile.components[Component.ETCD]
    assert isinstance(etcd, NotExposed)
    has_leader = evidence(doc, "etcd.has_leader")
    assert has_leader["status"] == "unknown" and etcd.why in has_leader["detail"], has_leader
    # a healthy lab: no incident
    assert (code, doc["cause"]) == (0, None), doc["headline"]


def test_a_scheduler_backlog_is_named(provider_lab: tuple[str, Lab, Path]) -> None:
    _, lab, kubeconfig = provider_lab
    target = resolve_target(lab.layout.kubeconfig)
    asyncio.run(inject("scheduler-backlog", target))
    try:
        # the scheduler's first attempt at each pod and its status writes (two steps), then
        # one more whole triage
        ends = time.monotonic() + steps(2) + TRIAGE_LIMIT_S
        while True:
            code, doc = triaged(kubeconfig)
            if doc["cause"] and doc["cause"]["id"] == "P2":
                assert code == 1
                break
            assert time.monotonic() < ends, doc["headline"]
    finally:
        asyncio.run(recover("scheduler-backlog", target))


async def _may_view_metrics(lab: Lab, account_name: str) -> None:
    """Bind the account to ``cluster-monitoring-view``, as an OpenShift admin would."""
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{account_name}-{VIEW_ROLE}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": VIEW_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": account_name,
                      "namespace": SA_NAMESPACE}],
    }  # fmt: skip
    async with kube.api_client(lab.layout.kubeconfig) as api:
        rbac = client.RbacAuthorizationV1Api(api)
        await kube.created(rbac.create_cluster_role_binding(kube.body(binding)))


def test_openshift_metrics_from_the_thanos_querier_that_auto_finds(
    provider_lab: tuple[str, Lab, Path],
) -> None:
    """``--prometheus auto`` finds the thanos-querier Route and sends it the user's own
    token: the proxy's reviews pass for a user with cluster-monitoring-view, the look-back
    comes from Prometheus, and etcd, which OpenShift does not expose to the pod proxy, is
    read from the monitoring stack.
    """
    name, lab, kubeconfig = provider_lab
    if name != "openshift":
        pytest.skip("OpenShift's monitoring stack")
    querier = lab.info["thanos_querier"]
    asyncio.run(_may_view_metrics(lab, f"ktop-{name}"))
    argv = [
        sys.executable, "-m", "ktop", "--kubeconfig", str(kubeconfig), "triage",
        "--prometheus", "auto", "--prometheus-ca", str(lab.layout.pki / "ca.crt"),
        "--output", "json",
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=TRIAGE_LIMIT_S)
    assert done.stdout, done.stderr
    doc = json.loads(done.stdout)
    assert doc["source"]["look_back_from"] == LOOK_BACK_PROMETHEUS, doc["source"]
    has_leader = evidence(doc, "etcd.has_leader")
    assert has_leader["status"] == "ok", has_leader
    # every query went through the proxy, as this account, and none was refused
    lines = Path(querier["log"]).read_text().splitlines()
    ours = [ln for ln in lines if ln.endswith(f":ktop-{name}")]
    assert ours and all(ln.startswith("200 ") for ln in ours), lines[-5:]
    assert any(" /api/v1/query_range " in ln for ln in ours), ours[:5]
