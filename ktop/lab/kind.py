"""`ktop demo --kind` support: a kind cluster with three zones and the same injector.

kind needs Docker (or Podman), which the development machines do not have; only the
missing-tool path is tested there. `ktop demo --kind` reaches it through the composition
root (``ktop.compose``), from ``ktop.commands.demo``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ktop.lab import kube
from ktop.lab import scenarios_api as api_s
from ktop.lab.config import RACK_LABEL, REGION, REGION_LABEL, ZONE_LABEL
from ktop.lab.target import LabTarget, check_is_lab
from ktop.sources.sim import scenarios as scenario_list

INSTALL_HINTS = {
    "kind": (
        "kind is not on PATH. Install it with `go install sigs.k8s.io/kind@v0.31.0` (then add "
        "$(go env GOPATH)/bin to PATH) or download a release binary as described at "
        "https://kind.sigs.k8s.io/docs/user/quick-start/#installation"
    ),
    "docker": (
        "docker is not on PATH. kind runs its nodes as containers: install Docker Engine "
        "(Debian: `apt-get install docker.io`, or https://docs.docker.com/engine/install/) and "
        "start the daemon, or use Podman with KIND_EXPERIMENTAL_PROVIDER=podman"
    ),
    "docker-daemon": (
        "the docker CLI is installed but no daemon answers (`docker info` failed): start it "
        "(`systemctl start docker`, or `dockerd &` as root) or point DOCKER_HOST at one"
    ),
}
ZONES = ("zone-a", "zone-b", "zone-c")
KIND_SCENARIOS = scenario_list.KIND_SCENARIOS
"""The scenarios a kind cluster can show, in the order they run (from the one list)."""
LOW_SA_NAMESPACE = "ktop-lab"
LOW_SA = "ktop-lab-low"


def _docker_daemon_reachable() -> bool:
    try:
        subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            check=True,
            capture_output=True,
            timeout=15,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def missing_kind_tools() -> list[str]:
    """What kind demos need but this machine lacks: "kind", "docker" (no executable on PATH)
    or "docker-daemon" (the CLI is there but `docker info` cannot reach a daemon).
    """
    missing = [tool for tool in ("kind", "docker") if shutil.which(tool) is None]
    if "docker" not in missing and not _docker_daemon_reachable():
        missing.append("docker-daemon")
    return missing


def missing_tools_message(missing: list[str]) -> str:
    """A precise, actionable message for the missing tools."""
    lines = [f"ktop demo --kind cannot run: missing {', '.join(missing)}."]
    lines += [f"  - {INSTALL_HINTS[tool]}" for tool in missing]
    lines.append(
        "  Without Docker, `python -m ktop.lab up --dir DIR` runs a real control plane "
        "on loopback instead (see docs/testing.md)."
    )
    return "\n".join(lines)


@dataclass
class KindDemoResult:
    """Outcome of kind_demo: ok=False means nothing was created; read `message`."""

    ok: bool
    message: str
    kubeconfig: Path | None = None
    results: list[dict[str, Any]] = field(default_factory=list)


def kind_config() -> str:
    """A kind cluster: one control plane and one worker per zone (labels set by kind)."""
    nodes: list[dict[str, Any]] = [{"role": "control-plane"}]
    for zone in ZONES:
        labels = {ZONE_LABEL: zone, REGION_LABEL: REGION, RACK_LABEL: f"{zone}-rack-00"}
        nodes.append({"role": "worker", "labels": labels})
    doc = {"kind": "Cluster", "apiVersion": "kind.x-k8s.io/v1alpha4", "nodes": nodes}
    return json.dumps(doc, indent=2) + "\n"  # kind reads YAML; JSON is YAML


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=True, text=True, capture_output=True, **kwargs)


async def _prepare(kubeconfig: Path, lab_id: str) -> str:
    """Write the lab marker and a low-privilege ServiceAccount; return its token."""
    async with kube.api_client(kubeconfig) as api:
        await kube.write_marker(api, lab_id)
        core = client.CoreV1Api(api)
        for create in (
            core.create_namespace(kube.body({"metadata": {"name": LOW_SA_NAMESPACE}})),
            core.create_namespaced_service_account(
                LOW_SA_NAMESPACE, kube.body({"metadata": {"name": LOW_SA}})
            ),
        ):
            try:
                await create
            except ApiException as exc:
                if exc.status != 409:
                    raise
        user = f"system:serviceaccount:{LOW_SA_NAMESPACE}:{LOW_SA}"
        await kube.grant_low_user_read(api, user)
        request = kube.body({"spec": {"expirationSeconds": 3600}})
        token = await core.create_namespaced_service_account_token(
            LOW_SA, LOW_SA_NAMESPACE, request
        )
        return str(token.status.token)


async def _scheduler_backlog(target: LabTarget, name: str, low_token: str) -> dict[str, Any]:
    return await api_s.scheduler_backlog(target, rack="zone-b-rack-00")


async def _apf_saturation(target: LabTarget, name: str, low_token: str) -> dict[str, Any]:
    user = f"system:serviceaccount:{LOW_SA_NAMESPACE}:{LOW_SA}"
    return await api_s.apf_saturation(target, low_token=low_token, user=user)


async def _zone_outage(target: LabTarget, name: str, low_token: str) -> dict[str, Any]:
    # kind's equivalent of killing a zone's kwok: stop the zone's worker container.
    container = f"{name}-worker"
    await asyncio.to_thread(_run, ["docker", "stop", container])
    return {"scenario": "zone-outage", "zone": ZONES[0], "stopped": container}


KIND_INJECT: dict[str, Callable[[LabTarget, str, str], Awaitable[dict[str, Any]]]] = {
    "scheduler-backlog": _scheduler_backlog,
    "apf-saturation": _apf_saturation,
    "zone-outage": _zone_outage,
}
"""What makes each of :data:`KIND_SCENARIOS` happen on kind (given the target, the
cluster's name and the low-privilege token); a unit test checks they are the same set."""


async def _run_scenarios(
    name: str, kubeconfig: Path, scenarios: tuple[str, ...], low_token: str
) -> list[dict[str, Any]]:
    target = LabTarget(kubeconfig=kubeconfig)
    await check_is_lab(target)
    results: list[dict[str, Any]] = []
    for scenario in scenarios:
        if scenario in KIND_INJECT:
            results.append(await KIND_INJECT[scenario](target, name, low_token))
        else:
            results.append({"scenario": scenario, "skipped": "needs the local lab (not kind)"})
    return results


def kind_demo(
    name: str = "ktop-demo",
    work_dir: Path | None = None,
    scenarios: tuple[str, ...] = KIND_SCENARIOS,
) -> KindDemoResult:
    """Create a kind cluster `name` (3 zones) and inject `scenarios` into it.

    When kind or docker is missing, nothing is done and the result's message says what is
    missing and how to install it. The kubeconfig is written to `work_dir` (default:
    ./ktop-demo-<name>).
    """
    missing = missing_kind_tools()
    if missing:
        return KindDemoResult(ok=False, message=missing_tools_message(missing))
    work = (work_dir or Path.cwd() / f"ktop-demo-{name}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    config_path = work / "kind.yaml"
    config_path.write_text(kind_config(), encoding="utf-8")
    kubeconfig = work / "kubeconfig"
    try:
        clusters = _run(["kind", "get", "clusters"]).stdout.split()
        if name not in clusters:
            _run(
                [
                    "kind",
                    "create",
                    "cluster",
                    "--name",
                    name,
                    "--config",
                    str(config_path),
                    "--kubeconfig",
                    str(kubeconfig),
                    "--wait",
                    "120s",
                ]
            )
        kubeconfig.write_text(_run(["kind", "get", "kubeconfig", "--name", name]).stdout)
    except subprocess.CalledProcessError as exc:
        return KindDemoResult(ok=False, message=f"kind failed: {exc.stderr or exc}")
    lab_id = f"kind-{name}"

    async def go() -> list[dict[str, Any]]:
        token = await _prepare(kubeconfig, lab_id)
        return await _run_scenarios(name, kubeconfig, scenarios, token)

    results = asyncio.run(go())
    return KindDemoResult(
        ok=True,
        message=f"kind cluster {name!r} ready; kubeconfig {kubeconfig}; injected "
        f"{', '.join(r['scenario'] for r in results)}. "
        f"Delete it with `kind delete cluster --name {name}`.",
        kubeconfig=kubeconfig,
        results=results,
    )
