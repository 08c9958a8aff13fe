"""docs/rbac.yaml grants exactly what the live source reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ktop.sources.live.reads import NON_RESOURCE_READS, RESOURCE_READS

RBAC = Path(__file__).resolve().parents[2] / "docs" / "rbac.yaml"


def _role() -> dict[str, Any]:
    docs = list(yaml.safe_load_all(RBAC.read_text()))
    roles = [d for d in docs if d and d.get("kind") == "ClusterRole"]
    assert len(roles) == 1
    role: dict[str, Any] = roles[0]
    return role


def test_resource_rules_are_exactly_the_reads() -> None:
    granted: dict[tuple[str, str], set[str]] = {}
    for rule in _role()["rules"]:
        for group in rule.get("apiGroups", []):
            for res in rule.get("resources", []):
                granted.setdefault((group, res), set()).update(rule["verbs"])
    assert granted == {k: set(v) for k, v in RESOURCE_READS.items()}


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
    verbs = {v for r in _role()["rules"] for v in r["verbs"]}
    assert verbs <= {"get", "list", "watch"}
