"""``ktop triage --bundle`` on the real dumps: every number checked against an independent reading.

Metrics are parsed with prometheus_client's parser and quantiles walked by hand
the way Prometheus' ``histogram_quantile`` interpolates; nodes and pods are read
from the JSON with plain dict code; zone states follow the node lifecycle
controller's rule written out here. Nothing is computed with ktop's own code.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.cli import main
from ktop.commands.options import DEFAULT_LOOK_BACK_S
from ktop.model.zones import DEFAULT_UNHEALTHY_ZONE_THRESHOLD
from tests.unit.bundles import FIXTURES, REAL_CAPTURED_AT, real_bundle


def samples(path: Path, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample called ``name`` in an exposition, by prometheus_client's parser."""
    out = []
    for fam in text_string_to_metric_families(path.read_text()):
        for s in fam.samples:
            if s.name == name:
                out.append((dict(s.labels), float(s.value)))
    return out


def histogram_quantile(q: float, buckets: Iterable[tuple[float, float]]) -> float:
    """Prometheus' interpolation over cumulative (le, count) buckets."""
    b = sorted(buckets)
    total = b[-1][1]
    rank = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in b:
        if c >= rank:
            if math.isinf(le):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_c) / (c - prev_c)
        prev_le, prev_c = le, c
    raise AssertionError("no bucket reached the rank")


def lifetime_quantile(path: Path, family: str) -> float:
    acc: dict[float, float] = {}
    for labels, v in samples(path, family + "_bucket"):
        le = float(labels["le"])
        acc[le] = acc.get(le, 0.0) + v
    return histogram_quantile(0.99, acc.items())


def one(path: Path, name: str) -> float:
    return sum(v for _, v in samples(path, name))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = real_bundle(tmp_path_factory.mktemp("real"))
    out = tmp_path_factory.mktemp("out") / "triage.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["triage", "--bundle", str(root), "--output", "json"])
    out.write_text(buf.getvalue())
    doc: dict[str, Any] = json.loads(buf.getvalue())
    doc["_exit"] = code
    return doc


ETCD = {
    "minikube": FIXTURES / "nri-k8s-1.35_etcd_metrics.prom",
    "qubership": FIXTURES / "qubership_etcd-3.4.3_follower_metrics.prom",
}


@pytest.mark.parametrize("instance", sorted(ETCD))
def test_etcd_members(report: dict[str, Any], instance: str) -> None:
    path = ETCD[instance]
    row = next(r for r in report["signals"]["etcd"] if r["instance"] == instance)
    assert row["wal_fsync_p99_s"] == pytest.approx(
        lifetime_quantile(path, "etcd_disk_wal_fsync_duration_seconds")
    )
    assert row["backend_commit_p99_s"] == pytest.approx(
        lifetime_quantile(path, "etcd_disk_backend_commit_duration_seconds")
    )
    assert row["is_leader"] is (one(path, "etcd_server_is_leader") == 1)
    assert row["has_leader"] is (one(path, "etcd_server_has_leader") == 1)
    # a member started within the look-back before the capture: the changes after the
    # first leader it found; one started before: its lifetime count (one scrape)
    changes = one(path, "etcd_server_leader_changes_seen_total")
    started_within = REAL_CAPTURED_AT - one(path, "process_start_time_seconds")
    since_start = started_within <= DEFAULT_LOOK_BACK_S
    assert row["leader_changes"] == (changes - 1 if since_start else changes)
    size = samples(path, "etcd_mvcc_db_total_size_in_bytes") or samples(
        path, "etcd_debugging_mvcc_db_total_size_in_bytes"
    )
    assert row["db_size_bytes"] == sum(v for _, v in size)
    assert row["db_in_use_bytes"] == one(path, "etcd_mvcc_db_total_size_in_use_in_bytes")
    assert row["quota_bytes"] == one(path, "etcd_server_quota_backend_bytes")
    assert row["window"] == "lifetime"  # one scrape per member


def test_apiserver(report: dict[str, Any]) -> None:
    path = FIXTURES / "nri-k8s-1.35_kube-apiserver_metrics.prom"
    (row,) = report["signals"]["apiservers"]
    assert row["instance"] == "minikube"
    watches = [
        v for lab, v in samples(path, "apiserver_longrunning_requests") if lab["verb"] == "WATCH"
    ]
    assert row["watches"] == sum(watches)
    assert row["inflight"] == one(path, "apiserver_current_inflight_requests")
    assert row["memory_bytes"] == one(path, "process_resident_memory_bytes")
    assert row["start_time"] == round(one(path, "process_start_time_seconds"))
    # rates need two scrapes: unknown is null, never 0
    assert row["requests_per_s"] is None and row["cpu_cores"] is None


def test_apf_per_instance(report: dict[str, Any]) -> None:
    path = FIXTURES / "nri-k8s-1.35_kube-apiserver_metrics.prom"
    rows = {(r["instance"], r["priority_level"]): r for r in report["signals"]["apf"]}
    queued: dict[str, float] = {}
    for lab, v in samples(path, "apiserver_flowcontrol_current_inqueue_requests"):
        queued[lab["priority_level"]] = queued.get(lab["priority_level"], 0.0) + v
    for pl, n in queued.items():
        assert rows[("minikube", pl)]["in_queue"] == n
    # the dump-only instance: waiting and executing from the dump, rates and waits unknown
    dump = (FIXTURES / "apf_dump_priority_levels.kueue-issue-2973.txt").read_text().splitlines()
    header = [c.strip() for c in dump[0].split(",")]
    for line in dump[1:]:
        cells = dict(zip(header, (c.strip() for c in line.split(",")), strict=False))
        row = rows[("kind", cells["PriorityLevelName"])]
        assert row["in_queue"] == int(cells["WaitingRequests"])
        assert row["executing"] == int(cells["ExecutingRequests"])
        assert row["rejected_per_s"] is None and row["wait_p99_s"] is None


def _zone_key(labels: dict[str, str]) -> tuple[str, str]:
    region = labels.get("failure-domain.beta.kubernetes.io/region") or labels.get(
        "topology.kubernetes.io/region", ""
    )
    zone = labels.get("failure-domain.beta.kubernetes.io/zone") or labels.get(
        "topology.kubernetes.io/zone", ""
    )
    return region, zone


def _state(ready: int, not_ready: int) -> str:
    if ready == 0 and not_ready > 0:
        return "FullDisruption"
    # the node lifecycle controller's rule, with its default threshold (the one constant)
    if not_ready > 2 and not_ready / (ready + not_ready) >= DEFAULT_UNHEALTHY_ZONE_THRESHOLD:
        return "PartialDisruption"
    return "Normal"


def test_nodes_and_zones(report: dict[str, Any]) -> None:
    doc = json.loads((FIXTURES / "openshift-insights_gcp-3zone_nodelist.json").read_text())
    zones: dict[tuple[str, str], list[int]] = {}
    for n in doc["items"]:
        conds = {c["type"]: c["status"] for c in n["status"].get("conditions", [])}
        ok = conds.get("Ready") == "True"
        z = zones.setdefault(_zone_key(n["metadata"].get("labels", {})), [0, 0])
        z[0 if ok else 1] += 1
    got = report["signals"]["nodes"]
    assert got["total"] == len(doc["items"])
    assert got["not_ready"] == sum(z[1] for z in zones.values())
    expected = (
        sorted(
            {"region": r, "zone": z, "total": a + b, "not_ready": b, "state": _state(a, b)}
            for (r, z), (a, b) in zones.items()
        )
        if False
        else sorted(((r, z, a + b, b, _state(a, b)) for (r, z), (a, b) in zones.items()))
    )
    mine = sorted(
        (z["region"], z["zone"], z["total"], z["not_ready"], z["state"]) for z in got["zones"]
    )
    assert mine == expected


def test_scheduler(report: dict[str, Any]) -> None:
    import yaml

    path = FIXTURES / "nri-k8s-1.35_kube-scheduler_metrics.prom"
    queues = {lab["queue"]: v for lab, v in samples(path, "scheduler_pending_pods")}
    assert report["signals"]["scheduler"]["pending_by_queue"] == {
        q: queues[q] for q in ("active", "backoff", "unschedulable", "gated")
    }
    pods = yaml.safe_load((FIXTURES / "nri-k8s-1.35_pods.yaml").read_text())["items"]
    reasons: dict[str, int] = {}
    for p in pods:
        if p["status"].get("phase") != "Pending":
            continue
        for c in p["status"].get("conditions", []):
            if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable":
                # "0/N nodes are available: <count reason>, <count reason>. <post-filter>"
                after = c["message"].split("available: ", 1)[1]
                filt = after.split(". ", 1)[0].rstrip(".")
                for part in filt.split(", "):
                    m = re.fullmatch(r"(\d+) (.*)", part)
                    assert m
                    reasons[m.group(2)] = reasons.get(m.group(2), 0) + 1
    assert reasons  # the dump has one unschedulable pod
    assert report["signals"]["scheduler"]["pending_by_reason"] == reasons


def test_verdicts_and_exit_code(report: dict[str, Any]) -> None:
    paths = {p["id"]: p for p in report["paths"]}
    # one pod fits no node (node affinity): a note, not a suspect (one pod is not "many
    # pods Pending"); with no Warning events in the bundle P2 cannot be clear
    p2 = {e["id"]: e for e in paths["P2"]["evidence"]}
    assert p2["sched.unschedulable"]["value"] == 1 and p2["sched.unschedulable"]["note"]
    assert paths["P2"]["verdict"] == "unknown"
    assert [p for p, v in paths.items() if v["verdict"] == "suspect"] == []
    assert report["_exit"] == 0
    # no Leases in the bundle: P4 cannot be clear
    assert paths["P4"]["verdict"] == "unknown"
    lease = next(e for e in paths["P4"]["evidence"] if e["id"] == "nodes.lease_lag_p99")
    assert lease["status"] == "unknown" and lease["value"] is None
    assert lease["detail"] == "api/leases.json is not in the bundle"
    # a single etcd scrape: lifetime leader changes are shown but do not clear ETCD
    assert paths["ETCD"]["verdict"] == "unknown"
    assert report["errors"] == []
    assert "api/events.json" in report["source"]["missing"]
