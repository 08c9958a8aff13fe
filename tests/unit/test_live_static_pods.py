"""Static control-plane pods through the pod proxy: request building and error paths,
on the real pods of a minikube cluster (tests/fixtures/nri-k8s-1.35_pods.yaml)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktop.model.events import Component
from ktop.sources.live import reads
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError
from ktop.sources.live.static_pods import (
    STATIC_COMPONENTS,
    discover_component,
    leader_node,
    proxy_target,
)
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi, status_body

FIXTURE = Path(__file__).parent.parent / "fixtures" / "nri-k8s-1.35_pods.yaml"
SPECS = {s.component: s for s in STATIC_COMPONENTS}
NODE = "datagen-1-35"


def pods() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = yaml.safe_load(FIXTURE.read_text())["items"]
    return [p for p in items if p["metadata"].get("namespace") == "kube-system"]


def labelled(selector: str) -> list[dict[str, Any]]:
    key, _, value = selector.partition("=")
    return [p for p in pods() if (p["metadata"].get("labels") or {}).get(key) == value]


def flag(pod: dict[str, Any], name: str) -> str | None:
    for arg in pod["spec"]["containers"][0].get("command", []):
        if arg.startswith(name + "="):
            return str(arg.split("=", 1)[1])
    return None


@pytest.mark.parametrize("component", list(SPECS))
def test_loopback_components_on_minikube_say_why_they_cannot_be_proxied(
    component: Component,
) -> None:
    spec = SPECS[component]
    (pod,) = labelled(spec.selector)
    target = proxy_target(spec, pod)
    assert target.path == ""
    # minikube (kubeadm) binds the scheduler and controller-manager, and etcd's metrics,
    # to 127.0.0.1: read the flag from the pod independently and expect it in the reason.
    name = "--listen-metrics-urls" if component is Component.ETCD else "--bind-address"
    value = flag(pod, name)
    assert value is not None and "127.0.0.1" in value
    assert "127.0.0.1" in target.reason and "pod proxy cannot reach" in target.reason
    assert target.pod == pod["metadata"]["name"]


def test_reachable_component_gets_a_pod_proxy_path() -> None:
    spec = SPECS[Component.CONTROLLER_MANAGER]
    (pod,) = copy.deepcopy(labelled(spec.selector))
    cmd = pod["spec"]["containers"][0]["command"]
    cmd[:] = [a for a in cmd if not a.startswith("--bind-address")] + ["--secure-port=10357"]
    target = proxy_target(spec, pod)
    name = pod["metadata"]["name"]
    assert target.reason == ""
    assert target.path == f"/api/v1/namespaces/kube-system/pods/https:{name}:10357/proxy/metrics"
    assert reads.grant(target.path) == ("", "pods/proxy")
    assert reads.needed(target.path, "get")


def test_leader_from_the_lease_holder() -> None:
    lease = {"spec": {"holderIdentity": f"{NODE}_7b1e9f2c-5d7e-4a38-9b0e-0c2f3a4b5c6d"}}
    assert leader_node(lease) == NODE
    assert leader_node({"spec": {}}) == ""


def fake(lease: Answer, pod_list: Answer | None = None) -> tuple[KubeTransport, FakeApi]:
    def route(c: Call) -> Answer:
        assert reads.needed(c.path, c.verb), c
        if c.path == reads.SYSTEM_PODS:
            if pod_list is not None:
                return pod_list
            return Answer(body={"items": labelled(c.query["labelSelector"])})
        return lease

    api = FakeApi(route)
    return KubeTransport(api, CostMeter()), api  # type: ignore[arg-type]


async def test_discovery_reads_pods_then_the_leader_lease() -> None:
    holder = Answer(body={"spec": {"holderIdentity": f"{NODE}_uuid"}})
    t, api = fake(holder)
    found = await discover_component(t, SPECS[Component.SCHEDULER])
    assert [c.path for c in api.calls] == [
        reads.SYSTEM_PODS,
        reads.SYSTEM_LEASE.format(name="kube-scheduler"),
    ]
    assert api.calls[0].query["labelSelector"] == "component=kube-scheduler"
    assert found.reason == "" and [p.pod for p in found.targets] == [f"kube-scheduler-{NODE}"]


@pytest.mark.parametrize(
    ("lease", "pod_list", "want"),
    [
        (
            Answer(),
            Answer(403, status_body(403, 'pods is forbidden: User "ktop"')),
            "403 Forbidden: RBAC does not allow 'list' on pods in kube-system "
            "(component=kube-scheduler)",
        ),
        (
            Answer(403, status_body(403, "leases is forbidden")),
            None,
            "403 Forbidden: RBAC does not allow 'get' on lease kube-system/kube-scheduler",
        ),
        (
            Answer(body={"spec": {"holderIdentity": "other-node_uuid"}}),
            None,
            "leader other-node of lease kube-scheduler runs no pod",
        ),
        (Answer(body={"items": []}), Answer(body={"items": []}), "no static pod labelled"),
    ],
)
async def test_discovery_failures_are_reasons(
    lease: Answer, pod_list: Answer | None, want: str
) -> None:
    t, _ = fake(lease, pod_list)
    found = await discover_component(t, SPECS[Component.SCHEDULER])
    assert found.targets == () and want in found.reason


async def test_a_403_from_behind_the_proxy_is_not_called_rbac() -> None:
    """The apiserver relays what the proxied pod (or a proxy on the way) answered."""
    path = reads.POD_PROXY.format(pod="https:kube-scheduler-n1:10259")

    def route(c: Call) -> Answer:
        if c.path == path:
            return Answer(403, b"resolve_deny: denied destination")
        return Answer(403, status_body(403, 'pods "x" is forbidden'))

    api = FakeApi(route)
    t = KubeTransport(api, CostMeter())  # type: ignore[arg-type]
    with pytest.raises(ApiError) as relayed:
        await t.get(path)
    assert str(relayed.value) == (
        f"403 on get {path}, not from the apiserver: resolve_deny: denied destination"
    )
    with pytest.raises(ApiError) as rbac:
        await t.get(reads.SYSTEM_LEASE.format(name="kube-scheduler"))
    assert str(rbac.value).startswith("403 Forbidden: RBAC does not allow 'get'")
