"""Who runs the control plane: detected from what the cluster says about itself (real
nodes of an OpenShift cluster on GCP, version strings the providers publish), and where
each component is then read from (OpenShift's namespaces, EKS's metrics API), shown in
the status line, the reports and the triage JSON."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.report import to_json
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, ProviderDetected
from ktop.model.providers import (
    AKS,
    EKS,
    GKE,
    OPENSHIFT,
    SELF_MANAGED,
    ApiPath,
    ClusterFacts,
    NotExposed,
    PodLocation,
    Provider,
    detect,
    provider_words,
    providers_markdown,
)
from ktop.model.state import export_state, import_state
from ktop.scrub import Secrets
from ktop.sources.live import reads
from ktop.sources.live.control_plane import ComponentReader
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.provider_facts import api_groups, cluster_facts, first_node
from ktop.sources.live.static_pods import discover_component
from ktop.sources.live.supervisor import Supervisor
from ktop.sources.live.transport import KubeTransport
from ktop.ui.render.status import status_line
from tests.unit.fake_kube import Answer, Call, FakeApi
from tests.unit.snapshots import healthy

FIXTURES = Path(__file__).parent.parent / "fixtures"
OPENSHIFT_NODES = FIXTURES / "openshift-insights_gcp-3zone_nodelist.json"
MINIKUBE_PODS = FIXTURES / "nri-k8s-1.35_pods.yaml"


def test_an_openshift_cluster_on_gcp_is_openshift_not_gke() -> None:
    """Real nodes of OpenShift on GCP carry GCP's providerID and a gke.io topology label
    beside OpenShift's own: OpenShift runs there, the control plane is OpenShift's."""
    body = json.loads(OPENSHIFT_NODES.read_text())
    provider_id, labels = first_node(body)
    assert provider_id.startswith("gce://") and "topology.gke.io/zone" in labels
    got = detect(ClusterFacts(provider_id=provider_id, node_labels=labels))
    assert got.provider is Provider.OPENSHIFT
    assert got.because == "node label node.openshift.io/os_id"


@pytest.mark.parametrize(
    ("facts", "provider"),
    [
        # the providers' own version strings and labels (docs/providers.md's sources)
        (ClusterFacts(git_version="v1.30.2-eks-db838b0"), Provider.EKS),
        (ClusterFacts(node_labels={"eks.amazonaws.com/nodegroup": "ng-1"}), Provider.EKS),
        (ClusterFacts(api_groups=frozenset({"metrics.eks.amazonaws.com"})), Provider.EKS),
        (ClusterFacts(git_version="v1.30.5-gke.1014001"), Provider.GKE),
        (ClusterFacts(node_labels={"cloud.google.com/gke-nodepool": "pool-1"}), Provider.GKE),
        (
            ClusterFacts(node_labels={"kubernetes.azure.com/cluster": "MC_rg_c_eastus"}),
            Provider.AKS,
        ),
        (ClusterFacts(api_groups=frozenset({"config.openshift.io", "apps"})), Provider.OPENSHIFT),
        # kubeadm on EC2 machines: the cloud's providerID alone is no managed control plane
        (
            ClusterFacts(git_version="v1.35.4", provider_id="aws:///us-east-1a/i-0abc"),
            Provider.SELF_MANAGED,
        ),
        (ClusterFacts(), Provider.SELF_MANAGED),
    ],
)
def test_each_provider_is_named_by_its_own_facts(facts: ClusterFacts, provider: Provider) -> None:
    assert detect(facts).provider is provider


def test_the_minikube_control_plane_is_where_the_self_managed_profile_looks() -> None:
    """The real kube-system pods of a kubeadm cluster match the self-managed selectors."""
    pods = yaml.safe_load(MINIKUBE_PODS.read_text())["items"]
    for loc in SELF_MANAGED.components.values():
        assert isinstance(loc, PodLocation) and loc.namespace == "kube-system"
        key, _, value = loc.selector.partition("=")
        found = [p for p in pods if (p["metadata"].get("labels") or {}).get(key) == value]
        assert [p["metadata"]["namespace"] for p in found] == ["kube-system"]


def test_managed_providers_say_why_a_component_cannot_be_read() -> None:
    for profile in (GKE, AKS):
        for c in (Component.SCHEDULER, Component.CONTROLLER_MANAGER, Component.ETCD):
            loc = profile.components[c]
            assert isinstance(loc, NotExposed) and profile.short in loc.reason
            assert "--prometheus" in loc.reason or "apiservers see it" in loc.reason
    assert isinstance(OPENSHIFT.components[Component.ETCD], NotExposed)
    assert isinstance(EKS.components[Component.SCHEDULER], ApiPath)


def _openshift_pod(kind: str, node: str) -> dict[str, Any]:
    """A kubeadm static pod of the real fixture, laid out as OpenShift lays its own (its
    namespace, labels and name: docs/providers.md's sources), listening on every address."""
    pods = yaml.safe_load(MINIKUBE_PODS.read_text())["items"]
    pod = copy.deepcopy(next(p for p in pods if p["metadata"]["labels"].get("component") == kind))
    loc = OPENSHIFT.components[Component.SCHEDULER]
    assert isinstance(loc, PodLocation)
    key, _, value = loc.selector.partition("=")
    pod["metadata"].update(
        namespace=loc.namespace, name=f"openshift-kube-scheduler-{node}", labels={key: value}
    )
    cmd = pod["spec"]["containers"][0]["command"]
    cmd[:] = [a for a in cmd if not a.startswith("--bind-address")]
    pod["spec"]["nodeName"] = node
    out: dict[str, Any] = pod
    return out


async def test_openshift_components_are_found_in_their_own_namespaces() -> None:
    node = "master-1"
    loc = OPENSHIFT.components[Component.SCHEDULER]
    assert isinstance(loc, PodLocation)
    pod = _openshift_pod("kube-scheduler", node)

    def route(c: Call) -> Answer:
        assert reads.needed(c.path, c.verb), c
        if c.path == "/api/v1/namespaces/openshift-kube-scheduler/pods":
            return Answer(body={"items": [pod]})
        if c.path == (
            "/apis/coordination.k8s.io/v1/namespaces/openshift-kube-scheduler/leases/kube-scheduler"
        ):
            return Answer(body={"spec": {"holderIdentity": f"{node}_uuid"}})
        return Answer(404, {"kind": "Status", "code": 404, "message": c.path})

    api = FakeApi(route)
    found = await discover_component(KubeTransport(api, CostMeter()), loc)  # type: ignore[arg-type]
    assert found.reason == "", found.reason
    (target,) = found.targets
    assert target.path == (
        f"/api/v1/namespaces/openshift-kube-scheduler/pods/https:openshift-kube-scheduler-{node}"
        ":10259/proxy/metrics"
    )
    assert reads.needed(target.path, "get")


class _Prometheus:
    prometheus: PrometheusMetrics | None = None
    prometheus_missing = False

    async def prometheus_polled(self) -> None:
        return None


def _reader(options: LiveOptions) -> ComponentReader:
    return ComponentReader(
        options,
        Supervisor(lambda: 100.0, random.Random(1), Secrets()),
        CostMeter(),
        lambda: 100.0,
        random.Random(1),
        _Prometheus(),
    )


async def test_eks_is_detected_and_its_scheduler_read_through_the_metrics_api() -> None:
    groups = {"groups": [{"name": "apps"}, {"name": "metrics.eks.amazonaws.com"}]}
    asked: list[str] = []

    def route(c: Call) -> Answer:
        asked.append(c.path)
        assert reads.needed(c.path, c.verb), c
        if c.path == reads.API_GROUPS:
            return Answer(body=groups)
        if c.path == reads.ONE_NODE:
            return Answer(body={"items": [{"spec": {"providerID": "aws:///us-east-1a/i-1"}}]})
        return Answer(404, {"kind": "Status", "code": 404, "message": c.path})

    t = KubeTransport(FakeApi(route), CostMeter())  # type: ignore[arg-type]
    facts, unread = await cluster_facts(t, "v1.31.2-eks-7f9249a")
    assert unread == () and reads.VERSION not in asked  # the probe's version is reused
    reader = _reader(LiveOptions())
    reader._git_version = facts.git_version
    events: list[Any] = []
    profile = await reader._profile(t, events.extend)
    assert profile is EKS
    (said,) = events
    assert isinstance(said, ProviderDetected) and said.provider == "eks"
    assert said.because == "apiserver version v1.31.2-eks-7f9249a"
    found = await reader._locate(t, EKS.components[Component.SCHEDULER])
    (target,) = found.targets
    assert target.path == "/apis/metrics.eks.amazonaws.com/v1/ksh/container/metrics"
    assert reads.needed(target.path, "get")
    # an EKS cluster that does not serve the group yet (before 1.28): why, not a 404
    reader._groups = frozenset({"apps"})
    found = await reader._locate(t, EKS.components[Component.CONTROLLER_MANAGER])
    assert found.targets == () and "metrics.eks.amazonaws.com not served" in found.reason


async def test_provider_given_is_not_detected() -> None:
    def route(c: Call) -> Answer:
        raise AssertionError(f"no read to detect a given provider: {c.path}")

    t = KubeTransport(FakeApi(route), CostMeter())  # type: ignore[arg-type]
    events: list[Any] = []
    profile = await _reader(LiveOptions(provider="gke"))._profile(t, events.extend)
    assert profile is GKE and events[0].because == "--provider"


def test_unreadable_api_groups_leave_detection_to_the_other_facts() -> None:
    assert api_groups({"groups": [{"name": "apps"}, {"nope": 1}, "x"]}) == frozenset({"apps"})
    assert first_node({"items": []}) == ("", {})


def test_the_provider_is_folded_kept_in_a_keyframe_and_shown() -> None:
    model = ClusterModel()
    model.apply_all([ProviderDetected(10.0, "eks", "apiserver version v1.31.2-eks-7f9249a")])
    snap = model.snapshot()
    assert (snap.provider, snap.provider_because) == (
        "eks",
        "apiserver version v1.31.2-eks-7f9249a",
    )
    again = import_state(export_state(model)).snapshot()
    assert (again.provider, again.provider_because) == (snap.provider, snap.provider_because)
    shown = replace(healthy(), provider=snap.provider, provider_because=snap.provider_because)
    assert "(EKS)" in status_line(shown, (), 120).plain
    assert "(EKS)" not in status_line(healthy(), (), 120).plain
    doc = to_json(triage(shown), shown, source={"kind": "live"})
    assert doc["provider"] == {"name": "eks", "because": snap.provider_because}
    assert to_json(triage(healthy()), healthy(), source={"kind": "test"})["provider"] is None
    assert provider_words("eks", "--provider") == "EKS (--provider)"


def test_docs_list_every_provider_and_every_sign() -> None:
    md = providers_markdown()
    for profile in (SELF_MANAGED, OPENSHIFT, EKS, GKE, AKS):
        assert f"### {profile.title}" in md
    assert "`node.openshift.io/os_id`" in md and "`-eks-`" in md


async def test_a_fact_that_cannot_be_read_is_left_out_with_its_reason() -> None:
    """A refused or timed-out read leaves its fact empty and says why; the others still
    name the provider (here the version the probe read)."""

    def route(c: Call) -> Answer:
        if c.path == reads.API_GROUPS:
            raise TimeoutError("no answer")
        return Answer(403, {"kind": "Status", "code": 403, "message": "nodes is forbidden"})

    t = KubeTransport(FakeApi(route), CostMeter())  # type: ignore[arg-type]
    facts, unread = await cluster_facts(t, "v1.30.5-gke.1014001")
    assert facts.api_groups == frozenset() and facts.node_labels == {}
    assert [line.split(":", 1)[0] for line in unread] == [reads.API_GROUPS, reads.ONE_NODE]
    assert "TimeoutError" in unread[0] and "403" in unread[1]
    assert detect(facts).provider is Provider.GKE
