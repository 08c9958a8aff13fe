"""Helpers for the e2e evidence tests: deadline polling, API reads, Prometheus queries."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes_asyncio import client

from ktop.lab import Lab, LabConfig, kube, procs, prom
from tests.e2e.cadence import POLL_EVERY_S

T = TypeVar("T")

KUBEADM_GROUP = "e2e-kubeadm"
"""The pytest-xdist group of the modules that start labs of their own laid out as kubeadm
lays one out (each such module sets ``XDIST_GROUP = KUBEADM_GROUP``). It runs in one
worker while the session lab's group runs in the other: both mostly wait on their
control planes' cadence, so together they take about as long as the longer one."""


def e2e_lab_config() -> LabConfig:
    """The session lab's configuration: 3 etcd members, KTOP_E2E_NODES (default 200) nodes."""
    return LabConfig(nodes=int(os.environ.get("KTOP_E2E_NODES", "200")), etcd_members=3)


@contextmanager
def running_lab(lab_dir: Path, cfg: LabConfig) -> Iterator[Lab]:
    """A lab started in ``lab_dir``; stopped on exit, with no process of it left behind."""
    instance = Lab(lab_dir, cfg)
    try:
        instance.start()
        yield instance
    finally:
        instance.stop()
        left = procs.running_components(lab_dir)
        assert not left, f"lab processes left behind after stop ({lab_dir.name}): {left}"


def poll(
    probe: Callable[[], T | None], *, timeout_s: float, what: str, every_s: float = POLL_EVERY_S
) -> T:
    """Call `probe` until it returns something truthy; fail the test at the deadline
    (``timeout_s``: one of tests/e2e/cadence.py's deadlines)."""
    ends = time.monotonic() + timeout_s
    last: object = None
    while True:
        try:
            result = probe()
        except Exception as exc:
            last = exc
        else:
            if result:
                return result
            last = result
        if time.monotonic() >= ends:
            pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what}; last: {last!r}")
        time.sleep(every_s)


def with_api(lab: Lab, fn: Callable[[client.ApiClient], Awaitable[T]]) -> T:
    """Run `fn(api)` against the lab's kubeconfig in a fresh event loop."""

    async def run() -> T:
        async with kube.api_client(lab.layout.kubeconfig) as api:
            return await fn(api)

    return asyncio.run(run())


def nodes(lab: Lab) -> list[Any]:
    """All V1Node objects."""

    async def fetch(api: client.ApiClient) -> list[Any]:
        return list((await client.CoreV1Api(api).list_node()).items)

    return with_api(lab, fetch)


def pods(lab: Lab, namespace: str) -> list[Any]:
    """All V1Pod objects of a namespace."""

    async def fetch(api: client.ApiClient) -> list[Any]:
        return list((await client.CoreV1Api(api).list_namespaced_pod(namespace)).items)

    return with_api(lab, fetch)


def ready_status(node: Any) -> str:
    """The node's Ready condition status ("True", "False", "Unknown" or "missing")."""
    for cond in node.status.conditions or []:
        if cond.type == "Ready":
            return str(cond.status)
    return "missing"


def taint_keys(node: Any) -> set[str]:
    """The keys of the node's taints."""
    return {t.key for t in node.spec.taints or []}


def promql(lab: Lab, query: str, at: float | None = None) -> list[dict[str, Any]]:
    """Instant query against the lab's Prometheus (now, or at its time ``at``)."""
    url = lab.info["prometheus_url"]
    assert url, "the lab runs without Prometheus"
    return prom.query(str(url), query, at)


def promql_by(lab: Lab, query: str, label: str) -> dict[str, float]:
    """Instant query keyed by `label`."""
    return {s["metric"].get(label, ""): s["value"] for s in promql(lab, query)}


def poll_query(
    lab: Lab,
    query: str,
    label: str,
    accept: Callable[[dict[str, float]], bool],
    *,
    timeout_s: float,
    what: str,
) -> dict[str, float]:
    """Poll a Prometheus query (keyed by `label`) until `accept` likes the result."""

    def probe() -> dict[str, float] | None:
        got = promql_by(lab, query, label)
        return got if accept(got) else None

    return poll(probe, timeout_s=timeout_s, what=what)
