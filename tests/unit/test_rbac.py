"""docs/rbac.yaml grants exactly what the live source reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ktop.sources.live.reads import NON_RESOURCE_READS, OPTIONAL_RESOURCE_READS, RESOURCE_READS

RBAC = Path(__file__).resolve().parents[2] / "docs" / "rbac.yaml"


def _role(name: str = "ktop-reader") -> dict[str, Any]:
    docs = list(yaml.safe_load_all(RBAC.read_text()))
    roles = [d for d in docs if d and d.get("kind") == "ClusterRole"]
    assert [r["metadata"]["name"] for r in roles] == ["ktop-reader", "ktop-components"]
    role: dict[str, Any] = next(r for r in roles if r["metadata"]["name"] == name)
    return role


def _granted(role: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    granted: dict[tuple[str, str], set[str]] = {}
    for rule in role["rules"]:
        for group in rule.get("apiGroups", []):
            for res in rule.get("resources", []):
                granted.setdefault((group, res), set()).update(rule["verbs"])
    return granted


def test_resource_rules_are_exactly_the_reads() -> None:
    assert _granted(_role()) == {k: set(v) for k, v in RESOURCE_READS.items()}


def test_optional_role_is_exactly_the_optional_reads() -> None:
    role = _role("ktop-components")
    assert not any("nonResourceURLs" in r for r in role["rules"])
    assert _granted(role) == {k: set(v) for k, v in OPTIONAL_RESOURCE_READS.items()}
    # Every binding names a role that exists.
    docs = [d for d in yaml.safe_load_all(RBAC.read_text()) if d]
    roles = {d["metadata"]["name"] for d in docs if d["kind"] == "ClusterRole"}
    bound = {d["roleRef"]["name"] for d in docs if d["kind"] == "ClusterRoleBinding"}
    assert bound == roles


def test_non_resource_urls_cover_the_reads_and_only_get() -> None:
    rules = [r for r in _role()["rules"] if "nonResourceURLs" in r]
    assert all(r["verbs"] == ["get"] for r in rules)
    patterns = [u for r in rules for u in r["nonResourceURLs"]]

    def allowed(url: str) -> bool:
        return any(url.startswith(p[:-1]) if p.endswith("*") else url == p for p in patterns)

    assert all(allowed(u) for u in NON_RESOURCE_READS)
    assert all(
        any(allowed(u) and u.startswith(p.rstrip("*")) for u in NON_RESOURCE_READS)
        for p in patterns
    )


def test_no_write_verbs() -> None:
    verbs = {v for n in ("ktop-reader", "ktop-components") for r in _role(n)["rules"]
             for v in r["verbs"]}  # fmt: skip
    assert verbs <= {"get", "list", "watch"}


def test_bundle_capture_lists_are_declared_reads() -> None:
    from ktop.sources.bundle.capture import API_PATHS
    from ktop.sources.bundle.layout import API_RESOURCES
    from ktop.sources.live.reads import needed

    # every api/<resource>.json of the layout, as kubectl get <resource> -A lists it
    expected = {
        "nodes": ("v1", "/api/v1/nodes"),
        "pods": ("v1", "/api/v1/pods"),
        "events": ("v1", "/api/v1/events"),
        "leases": ("coordination.k8s.io/v1", "/apis/coordination.k8s.io/v1/leases"),
        "flowschemas": (
            "flowcontrol.apiserver.k8s.io/v1",
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        ),
        "prioritylevelconfigurations": (
            "flowcontrol.apiserver.k8s.io/v1",
            "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        ),
        "endpointslices": ("discovery.k8s.io/v1", "/apis/discovery.k8s.io/v1/endpointslices"),
        "resourcequotas": ("v1", "/api/v1/resourcequotas"),
    }
    assert expected == API_PATHS
    assert tuple(API_PATHS) == API_RESOURCES
    for _, path in API_PATHS.values():
        assert needed(path, "list"), path
