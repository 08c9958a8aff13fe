"""An OpenShift must-gather read as a bundle (``ktop triage --bundle DIR``): laid out as
``oc adm must-gather`` and its gather scripts write one (openshift/must-gather's
collection-scripts), filled with real objects and dumps (tests/fixtures, each with its
source). Every expectation is read from those files here with plain code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from ktop.sources.bundle.must_gather import gathered_at, must_gather_root
from tests.unit.bundles import FIXTURES
from tests.unit.test_audit import T0, event, stamp
from tests.unit.test_triage_audit import flow_schema
from tests.unit.test_triage_json_errors import triage_json

NODES = FIXTURES / "openshift-insights_gcp-3zone_nodelist.json"
LEVELS = FIXTURES / "apf_dump_priority_levels.kueue-issue-2973.txt"
KAS = ["kube-apiserver-master-0", "kube-apiserver-master-1"]
ANY = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}


def must_gather(root: Path, *, leases: bool = False, timestamp: str | None = None) -> Path:
    """``must-gather.local.N/<image-dir>/`` with nodes, pods, APF dumps of two apiservers."""
    top = root / "must-gather.local.4242" / "quay-io-openshift-must-gather-sha256-abc"
    nodes_dir = top / "cluster-scoped-resources" / "core" / "nodes"
    nodes_dir.mkdir(parents=True)
    for n in json.loads(NODES.read_text())["items"]:
        (nodes_dir / f"{n['metadata']['name']}.yaml").write_text(yaml.safe_dump(n))
    pods = yaml.safe_load((FIXTURES / "nri-k8s-1.35_pods.yaml").read_text())
    core = top / "namespaces" / "kube-system" / "core"
    core.mkdir(parents=True)
    (core / "pods.yaml").write_text(yaml.safe_dump(pods))
    for pod in KAS:
        d = (
            top / "namespaces" / "openshift-kube-apiserver" / "pods" / pod
            / "kube-apiserver" / "kube-apiserver" / "api_priority_and_fairness"
        )  # fmt: skip
        d.mkdir(parents=True)
        shutil.copyfile(LEVELS, d / "priority_levels")
    if leases:
        renew = stamp(T0 - 5)
        items = [
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": n["metadata"]["name"], "namespace": "kube-node-lease"},
                "spec": {"holderIdentity": n["metadata"]["name"], "renewTime": renew},
            }
            for n in json.loads(NODES.read_text())["items"]
        ]
        d = top / "namespaces" / "kube-node-lease" / "coordination.k8s.io"
        d.mkdir(parents=True)
        (d / "leases.yaml").write_text(yaml.safe_dump({"kind": "LeaseList", "items": items}))
    when = timestamp or "2026-12-07 03:10:00.123456789 +0000 UTC m=+0.041\n"
    (top / "timestamp").write_text(when)
    return root / "must-gather.local.4242"


def test_a_must_gather_is_found_at_its_root_or_one_level_up(tmp_path: Path) -> None:
    given = must_gather(tmp_path)
    root = must_gather_root(given)
    assert root is not None and (root / "timestamp").is_file()
    assert must_gather_root(root) == root
    assert must_gather_root(tmp_path / "nothing") is None
    assert gathered_at(root) == T0 + 0.123456


def test_triage_reads_its_nodes_dumps_and_time_and_says_what_it_lacks(tmp_path: Path) -> None:
    code, doc, _ = triage_json("--bundle", str(must_gather(tmp_path)))
    assert code in (0, 1), doc.get("error")
    assert doc["at"] == T0 + 0.123456
    items = json.loads(NODES.read_text())["items"]
    zones: dict[str, int] = {}
    for n in items:
        z = n["metadata"]["labels"]["topology.kubernetes.io/zone"]
        zones[z] = zones.get(z, 0) + 1
    got = {z["zone"]: z["total"] for z in doc["signals"]["nodes"]["zones"]}
    assert got == zones
    levels = {row.split(",")[0].strip() for row in LEVELS.read_text().splitlines()[1:] if row}
    rows = doc["signals"]["apf"]
    assert {(r["instance"], r["priority_level"]) for r in rows} >= {
        (pod, lvl) for pod in KAS for lvl in levels
    }
    missing = " ".join(doc["source"]["missing"])
    assert "coordination.k8s.io/leases.yaml" in missing
    lease_lag = [e for p in doc["paths"] for e in p["evidence"] if e["id"] == "nodes.lease_lag_p99"]
    assert lease_lag and all(e["status"] == "unknown" for e in lease_lag)
    assert any("every namespace inspected" in e["detail"] for e in lease_lag)


def test_its_leases_give_the_heartbeat_lag(tmp_path: Path) -> None:
    _, doc, _ = triage_json("--bundle", str(must_gather(tmp_path, leases=True)))
    (lag,) = {
        e["value"] for p in doc["paths"] for e in p["evidence"] if e["id"] == "nodes.lease_lag_p99"
    }
    assert lag is not None and abs(lag - (T0 + 0.123456 - (T0 - 5))) < 1.0


def test_a_broken_yaml_file_is_named_and_the_rest_read(tmp_path: Path) -> None:
    root = must_gather(tmp_path)
    inner = must_gather_root(root)
    assert inner is not None
    bad = next((inner / "cluster-scoped-resources" / "core" / "nodes").iterdir())
    bad.write_text("metadata: [unclosed\n")
    code, doc, _ = triage_json("--bundle", str(root))
    assert code in (0, 1)
    assert any(bad.name in e and "not YAML" in e for e in doc["errors"]), doc["errors"]
    total = len(json.loads(NODES.read_text())["items"])
    assert doc["signals"]["nodes"]["total"] == total - 1


def test_its_flowschemas_and_audit_logs_feed_the_audit_triage(tmp_path: Path) -> None:
    root = must_gather(tmp_path)
    inner = must_gather_root(root)
    assert inner is not None
    fs_dir = inner / "cluster-scoped-resources" / "flowcontrol.apiserver.k8s.io" / "flowschemas"
    fs_dir.mkdir(parents=True)
    everyone = {"kind": "Group", "group": {"name": "system:authenticated"}}
    schema = flow_schema("everyone", "shared", 100, everyone)
    (fs_dir / "everyone.yaml").write_text(yaml.safe_dump(schema))
    logs = inner / "audit_logs" / "kube-apiserver"
    logs.mkdir(parents=True)
    (logs / "master-0-audit.log").write_text(json.dumps(event(T0)) + "\n")
    _, doc, _ = triage_json("--bundle", str(root), "--audit-log", str(root))
    (client,) = doc["audit"]["clients"]
    assert (client["priority_level"], client["flow_schema"]) == ("shared", "everyone")
    assert "flowschemas" in doc["audit"]["classified_by"]


ETCD_INFO = FIXTURES / "etcdctl-3.6.16_etcd_info"


def _with_etcd_info(tmp_path: Path, case: str) -> Path:
    root = must_gather(tmp_path)
    inner = must_gather_root(root)
    assert inner is not None
    (inner / "etcd_info").mkdir()
    for f in (ETCD_INFO / case).glob("*.json"):
        shutil.copyfile(f, inner / "etcd_info" / f.name)
    return root


def test_etcd_info_gives_each_members_leader_and_size(tmp_path: Path) -> None:
    _, doc, _ = triage_json("--bundle", str(_with_etcd_info(tmp_path, "")))
    status = json.loads((ETCD_INFO / "endpoint_status.json").read_text())
    names = {
        m["ID"]: m["name"]
        for m in json.loads((ETCD_INFO / "member_list.json").read_text())["members"]
    }
    expected = {
        names[s["Status"]["header"]["member_id"]]: (
            s["Status"]["leader"] == s["Status"]["header"]["member_id"],
            s["Status"]["dbSize"],
            s["Status"]["dbSizeInUse"],
            s["Status"]["dbSizeQuota"],
        )
        for s in status
    }
    got = {
        m["instance"]: (m["is_leader"], m["db_size_bytes"], m["db_in_use_bytes"], m["quota_bytes"])
        for m in doc["signals"]["etcd"]
    }
    assert got == expected
    assert sum(leader for leader, *_ in got.values()) == 1
    # the etcd evidence names the etcd_info files it came from (those the case has)
    copied = {f"etcd_info/{f.name}" for f in ETCD_INFO.glob("*.json")}
    etcd = [e for p in doc["paths"] for e in p["evidence"] if e["pane"] == "etcd"]
    assert etcd and all(copied <= set(e["files"]) for e in etcd), etcd[0]["files"]


def test_a_member_that_failed_its_health_check_is_lost(tmp_path: Path) -> None:
    _, doc, _ = triage_json("--bundle", str(_with_etcd_info(tmp_path, "one-stopped")))
    health = json.loads((ETCD_INFO / "one-stopped" / "endpoint_health.json").read_text())
    (sick,) = [h for h in health if not h["health"]]
    members = json.loads((ETCD_INFO / "one-stopped" / "member_list.json").read_text())["members"]
    (name,) = [m["name"] for m in members if sick["endpoint"] in m["clientURLs"]]
    rows = {m["instance"]: m for m in doc["signals"]["etcd"]}
    assert sick["error"] in rows[name]["error"] and rows[name]["db_size_bytes"] is None
    lost = next(
        e
        for p in doc["paths"]
        if p["id"] == "ETCD"
        for e in p["evidence"]
        if e["id"] == "etcd.members_lost"
    )
    assert f"not read: {name}" in lost["detail"]
