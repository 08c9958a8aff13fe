"""Helpers for running ktop's live source against the lab, as a dedicated account."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ktop.hub import Hub
from ktop.lab import Lab, kube
from ktop.lab.config import write_kubeconfig
from ktop.model.cluster import ClusterModel
from ktop.model.model_inputs import ModelConfig
from ktop.model.snapshot import ClusterSnapshot
from ktop.sources.live.components import TlsFiles
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.source import LiveSource
from tests.e2e.cadence import (
    KTOP_DISCOVERY_S,
    KTOP_NODE_DETAIL_PER_S,
    KTOP_SCRAPE_S,
    KTOP_WATCH_TIMEOUT_S,
    SNAPSHOT_EVERY_S,
    deadline,
    steps,
)

RBAC = Path(__file__).resolve().parents[2] / "docs" / "rbac.yaml"
SA_NAMESPACE = "kube-system"
METER_FLOW_SCHEMA = "ktop-meter"
AUDIENCE = "https://kubernetes.default.svc.cluster.local"
"""The lab apiservers' issuer, which is their default token audience."""


async def _create(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        await fn(*args, **kwargs)
    except ApiException as exc:
        if exc.status != 409:  # already exists: the session lab is shared
            raise


def _bound(name: str, role: dict[str, Any], suffix: str) -> tuple[dict[str, Any], ...]:
    """``role`` as ``NAME-SUFFIX``, and its binding to the ServiceAccount ``name``."""
    role_name = f"{name}-{suffix}"
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": role_name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": SA_NAMESPACE}],
    }  # fmt: skip
    return {**role, "metadata": {"name": role_name}}, binding


async def account(
    lab: Lab,
    name: str,
    *,
    rbac_docs: dict[str, Any] | None = None,
    also: tuple[str, ...] = (),
) -> Path:
    """A ServiceAccount bound to a ClusterRole (docs/rbac.yaml's reader unless given), and
    to the docs' other ClusterRoles named in ``also`` (``ktop-components``); its
    kubeconfig."""
    docs = [d for d in yaml.safe_load_all(RBAC.read_text()) if d]
    roles = [
        next(d for d in docs if d["kind"] == "ClusterRole") if rbac_docs is None else rbac_docs
    ]
    roles += [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] in also]
    assert len(roles) == 1 + len(also), also
    pairs = [_bound(name, r, "reader" if i == 0 else f"role{i}") for i, r in enumerate(roles)]
    async with kube.api_client(lab.layout.kubeconfig) as api:
        core = client.CoreV1Api(api)
        rbac = client.RbacAuthorizationV1Api(api)
        await _create(
            core.create_namespaced_service_account,
            SA_NAMESPACE,
            {"metadata": {"name": name}},
        )
        for role, binding in pairs:
            await _create(rbac.create_cluster_role, role)
            await _create(rbac.create_cluster_role_binding, binding)
        request = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[AUDIENCE], expiration_seconds=7200)
        )
        token = await core.create_namespaced_service_account_token(name, SA_NAMESPACE, request)
    path = lab.dir / f"kubeconfig-{name}"
    write_kubeconfig(
        path,
        server=lab.info["apiservers"][0]["url"],
        token=token.status.token,
        ca_file=lab.layout.pki / "ca.crt",
    )
    return path


def options(lab: Lab, kubeconfig: Path, **overrides: Any) -> LiveOptions:
    """Live options that read every lab component, quickly."""
    base = LiveOptions(
        kubeconfig=str(kubeconfig),
        context=None,
        rack_label="topology.ktop.dev/rack",
        apiserver_scrape_s=KTOP_SCRAPE_S,
        apf_dump_s=KTOP_SCRAPE_S,
        discovery_s=KTOP_DISCOVERY_S,
        node_detail_per_s=KTOP_NODE_DETAIL_PER_S,
        etcd_metrics=tuple(m["metrics_url"] for m in lab.info["etcd"]),
        scheduler_metrics=(lab.info["scheduler"]["metrics_url"],),
        controller_manager_metrics=(lab.info["controller_manager"]["metrics_url"],),
        component_tls=TlsFiles(insecure=True),
        component_scrape_s=KTOP_SCRAPE_S,
        apiservers=tuple(a["url"] for a in lab.info["apiservers"]),
        watch_timeout_s=KTOP_WATCH_TIMEOUT_S,
    )
    return replace(base, **overrides)


@dataclass
class Running:
    """A live source feeding a hub, in the test's event loop."""

    hub: Hub
    source: LiveSource
    task: asyncio.Task[None]

    def snapshot(self) -> ClusterSnapshot:
        """A fresh snapshot (forced)."""
        published = self.hub.publish(force=True)
        assert published is not None
        return published.snapshot

    async def until(
        self, check: Callable[[ClusterSnapshot], Any], *, timeout_s: float, what: str
    ) -> Any:
        """Poll snapshots until ``check`` is truthy; return its value, or the snapshot
        when the value is ``True``; fail at the deadline."""
        ends = time.monotonic() + timeout_s
        last: Any = None
        while True:
            if self.task.done() and self.task.exception() is not None:
                raise self.task.exception()  # type: ignore[misc]
            snap = self.snapshot()
            try:
                result = check(snap)
            except Exception as exc:  # the data may be incomplete yet
                result, last = None, exc
            else:
                last = result
            if result is True:
                return snap
            if result:
                return result
            if time.monotonic() >= ends:
                failing = [f"{f.name}: {f.error}" for f in snap.freshness if f.error]
                pytest.fail(
                    f"timed out after {timeout_s:.0f}s waiting for {what}; last: {last!r}; "
                    f"failing inputs: {failing}"
                )
            await asyncio.sleep(SNAPSHOT_EVERY_S)


@asynccontextmanager
async def live(opts: LiveOptions, *, window_s: float | None = None) -> AsyncIterator[Running]:
    """Run a LiveSource until the block ends (its model's window ``window_s``, when given)."""
    hub = Hub() if window_s is None else Hub(ClusterModel(ModelConfig(window_s=window_s)))
    source = LiveSource(opts)
    task = asyncio.create_task(source.run(hub.ingest))
    try:
        yield Running(hub, source, task)
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


async def until_true(check: Callable[[], Any], *, timeout_s: float, what: str) -> Any:
    """Poll a synchronous check until truthy (an exception counts as "not yet")."""
    ends = time.monotonic() + timeout_s
    while True:
        try:
            result = check()
        except Exception:
            result = None
        if result:
            return result
        if time.monotonic() >= ends:
            pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what}")
        await asyncio.sleep(SNAPSHOT_EVERY_S)


def http_json_post(url: str, body: dict[str, Any]) -> Any:
    """POST JSON to a loopback URL and return the decoded answer."""
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=deadline(steps(1))) as resp:
        return json.loads(resp.read())
