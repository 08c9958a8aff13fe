"""Which cluster a scenario is injected into, and the safety check that it is a lab."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ktop.lab import kube
from ktop.lab.config import CONTEXT, MARKER_NAME, MARKER_NAMESPACE
from ktop.lab.util import LabError

FORCE_FLAG = "--i-know-this-is-not-a-lab-cluster"


class NotALabClusterError(LabError):
    """The target cluster carries no (matching) ktop lab marker."""


@dataclass(frozen=True)
class LabTarget:
    """A cluster to inject into: its kubeconfig and, for a local lab, its work dir/info."""

    kubeconfig: Path
    context: str | None = None
    lab_dir: Path | None = None
    info: dict[str, Any] | None = None

    def require_lab_dir(self, scenario: str) -> Path:
        """The lab dir; scenarios that stop processes cannot work without one."""
        if self.lab_dir is None:
            raise LabError(
                f"{scenario} stops/restarts control-plane processes and needs a local ktop lab "
                "(pass --dir, or a kubeconfig inside the lab dir)"
            )
        return self.lab_dir

    def admin_token(self) -> str:
        """The lab's admin token (local labs only)."""
        if not self.info:
            raise LabError("no cluster-info.json: admin token unknown")
        return str(self.info["admin_token"])


def resolve_target(
    kubeconfig: Path, lab_dir: Path | None = None, context: str | None = None
) -> LabTarget:
    """Build a LabTarget; the lab dir defaults to the kubeconfig's directory when it holds a
    cluster-info.json written by the lab.
    """
    kubeconfig = kubeconfig.resolve()
    if lab_dir is None and (kubeconfig.parent / "cluster-info.json").is_file():
        lab_dir = kubeconfig.parent
    info = None
    if lab_dir is not None:
        path = lab_dir / "cluster-info.json"
        if not path.is_file():
            raise LabError(f"{lab_dir} is not a ktop lab dir (no cluster-info.json)")
        info = json.loads(path.read_text(encoding="utf-8"))
        lab_dir = lab_dir.resolve()
    if context is None and info is not None:
        context = CONTEXT
    return LabTarget(kubeconfig=kubeconfig, context=context, lab_dir=lab_dir, info=info)


async def check_is_lab(target: LabTarget, *, force: bool = False) -> None:
    """Refuse clusters the lab did not create, unless `force` (the explicit flag) is set.

    A cluster qualifies when it holds the ConfigMap kube-system/ktop-lab-marker and, when a
    lab dir is known, the marker's lab id equals the one in its cluster-info.json.
    """
    if force:
        return
    async with kube.api_client(target.kubeconfig, target.context) as api:
        marker = await kube.read_marker(api)
    if marker is None:
        raise NotALabClusterError(
            f"refusing: no ConfigMap {MARKER_NAMESPACE}/{MARKER_NAME} in the cluster of "
            f"{target.kubeconfig}; it was not created by ktop.lab. Pass {FORCE_FLAG} to override."
        )
    if target.info is not None and marker != target.info.get("lab_id"):
        raise NotALabClusterError(
            f"refusing: the cluster's lab marker ({marker}) does not match "
            f"{target.lab_dir}/cluster-info.json ({target.info.get('lab_id')})"
        )
