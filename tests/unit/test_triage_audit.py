"""``ktop triage --audit-log``: the audit logs alone name the flooding client and make the
queueing path the cause; beside a healthy bundle they only add their evidence; the
cluster's own FlowSchemas classify the clients; bad options and unreadable logs are
clear errors. Expected counts come from the events written here, counted here.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.unit.bundles import write_list
from tests.unit.test_audit import T0, event
from tests.unit.test_bundle_triage import healthy_control_plane
from tests.unit.test_triage_json_errors import run, triage_json

FLOODER = "system:serviceaccount:batch:reporter"
FLOOD_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:batch", "system:authenticated")


def flood_log(path: Path, *, rejected_share: float = 0.4, n: int = 6000) -> list[dict[str, Any]]:
    """Ten minutes of kubelets renewing Leases and one service account listing pods."""
    rnd = random.Random(3)
    events = []
    for i in range(n):
        t = T0 + i * 600 / n
        if i % 2:
            code = 429 if rnd.random() < rejected_share else 200
            e = event(t, user=FLOODER, groups=FLOOD_GROUPS, agent="reporter/1.0", code=code)
        else:
            e = event(
                t,
                user=f"system:node:n{rnd.randint(1, 40)}",
                groups=("system:nodes", "system:authenticated"),
                verb="update",
                resource="leases",
                group="coordination.k8s.io",
                namespace="kube-node-lease",
                agent="kubelet/v1.35.0",
                latency_s=0.01,
            )
        events.append(e)
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return events


BATCH_ACCOUNTS = {"namespace": "batch", "name": "*"}
ANY = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}


def flow_schema(name: str, level: str, precedence: int, subject: dict[str, Any]) -> dict[str, Any]:
    """A FlowSchema putting ``subject``'s requests of every resource in ``level``."""
    return {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": name},
        "spec": {
            "matchingPrecedence": precedence,
            "priorityLevelConfiguration": {"name": level},
            "rules": [{"subjects": [subject], "resourceRules": [{**ANY, "namespaces": ["*"]}]}],
        },
    }


def _paths(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in doc["paths"]}


def test_audit_logs_alone_name_the_flooding_client(tmp_path: Path) -> None:
    events = flood_log(tmp_path / "audit.log")
    code, doc, _ = triage_json("--audit-log", str(tmp_path / "audit.log"))
    assert code == 1
    assert doc["source"]["kind"] == "audit-log"
    assert doc["cause"]["id"] == "API-429"
    assert FLOODER in doc["headline"] and "(audit logs)" in doc["headline"]
    a = doc["audit"]
    codes = Counter(e["responseStatus"]["code"] for e in events)
    assert (a["requests"], a["rejected"]) == (len(events), codes[429])
    top = a["clients"][0]
    flood = [e for e in events if e["user"]["username"] == FLOODER]
    assert (top["user"], top["requests"]) == (FLOODER, len(flood))
    assert top["rejected"] == sum(e["responseStatus"]["code"] == 429 for e in flood)
    # Kubernetes' defaults: a service account outside kube-system is a workload-low client
    assert (top["priority_level"], top["flow_schema"]) == ("workload-low", "service-accounts")
    assert "default FlowSchemas" in a["classified_by"]
    # nothing but the audit logs was read: no other path may pass for healthy
    others = [p for p in doc["paths"] if p["id"] != "API-429"]
    assert others and all(p["verdict"] == "unknown" for p in others)


def test_quiet_audit_logs_never_make_a_cause_nor_a_healthy_verdict(tmp_path: Path) -> None:
    flood_log(tmp_path / "audit.log", rejected_share=0.0)
    code, doc, _ = triage_json("--audit-log", str(tmp_path / "audit.log"))
    assert code == 0 and doc["cause"] is None
    assert all(p["verdict"] == "unknown" for p in doc["paths"])
    (ev,) = [e for e in _paths(doc)["API-429"]["evidence"] if e["id"] == "audit.rejected"]
    assert ev["status"] == "ok" and ev["value"] == 0


def test_beside_a_healthy_bundle_the_audit_log_adds_its_evidence(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    healthy_control_plane(bundle)
    flood_log(tmp_path / "audit.log", rejected_share=0.0)
    code, doc, _ = triage_json("--bundle", str(bundle), "--audit-log", str(tmp_path / "audit.log"))
    assert code == 0, doc["headline"]
    api429 = _paths(doc)["API-429"]
    assert api429["verdict"] == "clear"
    ids = {e["id"]: e for e in api429["evidence"]}
    assert ids["audit.top_client"]["status"] in ("ok", "warn")
    assert FLOODER in ids["audit.top_client"]["detail"]


def test_the_clusters_flowschemas_classify_the_clients(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    healthy_control_plane(bundle)
    accounts = {"kind": "ServiceAccount", "serviceAccount": BATCH_ACCOUNTS}
    batch = flow_schema("batch-reporters", "batch-low", 500, accounts)
    write_list(bundle, "flowschemas", "FlowSchemaList", [batch])
    flood_log(tmp_path / "audit.log")
    _, doc, _ = triage_json("--bundle", str(bundle), "--audit-log", str(tmp_path / "audit.log"))
    top = doc["audit"]["clients"][0]
    assert (top["priority_level"], top["flow_schema"]) == ("batch-low", "batch-reporters")
    assert "flowschemas.json" in doc["audit"]["classified_by"]


def test_the_window_counts_only_what_it_holds(tmp_path: Path) -> None:
    n = 6000
    events = flood_log(tmp_path / "audit.log", n=n)
    start, end = T0 + 120, T0 + 180
    _, doc, _ = triage_json(
        "--audit-log", str(tmp_path / "audit.log"), "--start", str(start), "--end", str(end)
    )
    inside = sum(start <= T0 + i * 600 / n < end for i in range(n))  # when flood_log wrote each
    assert doc["audit"]["requests"] == inside
    assert doc["audit"]["outside_window"] == len(events) - inside


def test_text_and_markdown_carry_the_table(tmp_path: Path) -> None:
    flood_log(tmp_path / "audit.log")
    code, out, _ = run(["triage", "--audit-log", str(tmp_path / "audit.log")])
    assert code == 1
    assert "audit logs:" in out and f"{FLOODER} (reporter/1.0) list pods" in out
    code, md, _ = run(
        ["triage", "--audit-log", str(tmp_path / "audit.log"), "--output", "markdown"]
    )
    assert "## Audit logs" in md and "| requests | peak/s | 429 |" in md


def test_audit_options_without_a_log_and_unreadable_logs_are_errors(tmp_path: Path) -> None:
    code, doc, _ = triage_json("--start", "2026-12-07T03:00:00Z")
    assert code == 2 and "go with --audit-log" in doc["error"]
    code, doc, _ = triage_json("--audit-log", str(tmp_path / "nope.log"))
    assert code == 2 and "--audit-log" in doc["error"] and "no such file" in doc["error"]
    bad = tmp_path / "bad.log"
    bad.write_text("not json\n", encoding="utf-8")
    code, doc, _ = triage_json("--audit-log", str(bad))
    assert code == 0 and doc["audit"]["malformed_lines"] == 1
    assert any("line 1: not JSON" in p for p in doc["audit"]["problems"])
    with pytest.raises(SystemExit) as stop:
        run(["triage", "--audit-log", str(bad), "--start", "yesterday"])
    assert stop.value.code == 2


def test_a_user_spread_over_several_kinds_of_call_is_named(tmp_path: Path) -> None:
    kinds = ("nodes", "pods", "events", "configmaps")
    events = [
        event(T0 + i * 0.05, user=FLOODER, resource=kinds[i % 4], code=429 if i % 3 else 200)
        for i in range(800)
    ]
    events += [event(T0 + i * 0.5, user=f"quiet-{i % 7}") for i in range(80)]
    log = tmp_path / "audit.log"
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    code, doc, _ = triage_json("--audit-log", str(log))
    assert code == 1 and FLOODER in doc["headline"], doc["headline"]
    (api429,) = [p for p in doc["paths"] if p["id"] == "API-429"]
    (named,) = [e for e in api429["evidence"] if e["id"] == "audit.top_client"]
    assert named["detail"].startswith(f"{FLOODER}: 100% of the 429s")
    # its four kinds of call are each a quarter of its 429s: no one of them dominates alone
    rows = [c for c in doc["audit"]["clients"] if c["user"] == FLOODER]
    assert len(rows) == len(kinds)
