"""Everything the live source reads, as data: the RBAC it needs is derived from this.

``docs/rbac.yaml`` must grant exactly these (a unit test checks it).
"""

from __future__ import annotations

RESOURCE_READS: dict[tuple[str, str], frozenset[str]] = {
    ("", "nodes"): frozenset({"get", "list", "watch"}),
    ("", "pods"): frozenset({"list", "watch"}),
    ("", "events"): frozenset({"list", "watch"}),
    ("", "resourcequotas"): frozenset({"list", "watch"}),
    ("coordination.k8s.io", "leases"): frozenset({"list", "watch"}),
    ("discovery.k8s.io", "endpointslices"): frozenset({"list"}),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): frozenset({"list"}),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): frozenset({"list"}),
}
"""(API group, resource) to the verbs ktop uses on it."""

NON_RESOURCE_READS = frozenset(
    {"/metrics", "/debug/api_priority_and_fairness/dump_priority_levels", "/version"}
)
"""Non-resource URLs ktop GETs."""
