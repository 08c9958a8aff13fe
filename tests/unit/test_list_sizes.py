"""Full-LIST size estimates from the apiserver's own metric, on the real 1.35 dump.

Expected values are read from the dump with prometheus_client's parser; bundle
List files measured on disk win over the estimate for the same resource.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from ktop.cli import main
from tests.unit.bundles import FIXTURES, real_bundle
from tests.unit.test_bundle_real import samples

DUMP = FIXTURES / "nri-k8s-1.35_kube-apiserver_metrics.prom"


def triage(root: Path) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["triage", "--bundle", str(root), "--output", "json"])
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def name(labels: dict[str, str]) -> str:
    return f"{labels['resource']}.{labels['group']}" if labels["group"] else labels["resource"]


def test_estimates_from_a_real_apiserver_largest_first(tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "metrics" / "apiserver" / "minikube").mkdir(parents=True)
    (root / "metrics" / "apiserver" / "minikube" / "1782468800.prom").write_text(DUMP.read_text())
    doc = triage(root)
    sizes = {name(lb): v for lb, v in samples(DUMP, "apiserver_resource_size_estimate_bytes")}
    counts = {name(lb): v for lb, v in samples(DUMP, "apiserver_resource_objects")}
    known = sorted(((v, r) for r, v in sizes.items() if v >= 0), key=lambda x: (-x[0], x[1]))
    top = known[:10]
    got = [c for c in doc["capacity"] if c["id"].startswith("full_list_bytes.")]
    assert [(c["value"], c["id"].removeprefix("full_list_bytes.")) for c in got] == top
    pods = next(c for c in got if c["id"] == "full_list_bytes.pods")
    assert pods["value"] == sizes["pods"] == 92925
    assert f"of {counts['pods']:.0f} objects" in pods["detail"]
    assert "apiserver_resource_size_estimate_bytes from minikube" in pods["detail"]
    # events could not be estimated (-1): not reported as a size
    assert sizes["events"] == -1
    assert "full_list_bytes.events" not in {c["id"] for c in doc["capacity"]}


def test_a_size_not_estimated_yet_is_unknown_not_zero(tmp_path: Path) -> None:
    # Shortly after it starts an apiserver exposes 0 for resources that have objects:
    # not an empty LIST, an estimate still to come.
    lines = []
    for line in DUMP.read_text().splitlines():
        if line.startswith('apiserver_resource_size_estimate_bytes{group="",resource="pods"}'):
            line = 'apiserver_resource_size_estimate_bytes{group="",resource="pods"} 0'
        lines.append(line)
    root = tmp_path / "b"
    (root / "metrics" / "apiserver" / "minikube").mkdir(parents=True)
    (root / "metrics" / "apiserver" / "minikube" / "1782468800.prom").write_text(
        "\n".join(lines) + "\n"
    )
    counts = {name(lb): v for lb, v in samples(DUMP, "apiserver_resource_objects")}
    assert counts["pods"] > 0
    doc = triage(root)
    ids = {c["id"]: c for c in doc["capacity"]}
    assert "full_list_bytes.pods" not in ids
    assert ids["full_list_bytes"]["value"] is None
    assert "has not estimated pods yet" in ids["full_list_bytes"]["detail"]


def test_a_bundle_list_file_wins_over_the_estimate(tmp_path: Path) -> None:
    root = real_bundle(tmp_path / "b")
    doc = triage(root)
    by_id = {c["id"]: c for c in doc["capacity"]}
    assert [c["id"] for c in doc["capacity"]].count("full_list_bytes.pods") == 1
    pods_file = root / "api" / "pods.json"
    assert by_id["full_list_bytes.pods"]["value"] == pods_file.stat().st_size
    assert "kubectl" in by_id["full_list_bytes.pods"]["detail"]
    # a resource the bundle did not list still has the apiserver's estimate
    assert "apiserver_resource_size_estimate_bytes" in by_id["full_list_bytes.configmaps"]["detail"]


def test_without_the_metric_the_reason_is_given(tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "metrics" / "apiserver" / "a").mkdir(parents=True)
    (root / "metrics" / "apiserver" / "a" / "1782468800.prom").write_text(
        '# TYPE apiserver_request_total counter\napiserver_request_total{verb="GET"} 1\n'
    )
    (cap,) = [c for c in triage(root)["capacity"] if c["id"].startswith("full_list_bytes")]
    assert cap["id"] == "full_list_bytes" and cap["value"] is None
    assert "not exposed (Kubernetes before 1.34" in cap["detail"]
