"""Synthetic bundles: each should make its path suspect; near misses should not.

Expected numbers come from the inputs the test writes (counter increases over
the scrape interval, bucket increases walked by hand), not from ktop.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ktop.cli import main
from tests.unit.bundles import (
    T0,
    apiserver_text,
    etcd_text,
    write_list,
    write_metrics,
    zone_nodes,
)
from tests.unit.test_bundle_real import histogram_quantile

FAST = [("0.005", 90), ("0.02", 100), ("0.1", 100), ("+Inf", 100)]
"""A healthy latency histogram (cumulative counts)."""
DT = 60


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def triage_json(root: Path) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(["triage", "--bundle", str(root), "--output", "json"])
    return code, json.loads(out)


def paths(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in doc["paths"]}


def grown(buckets: Sequence[tuple[str, float]], scrape: int) -> list[tuple[str, float]]:
    """A histogram's cumulative buckets at its ``scrape``-th scrape: each scrape observes
    as many as the first (a window with observations)."""
    return [(le, count * (scrape + 1)) for le, count in buckets]


def healthy_control_plane(
    root: Path,
    *,
    changes: tuple[int, int] = (1, 1),
    fsync_moves: bool = True,
    wait_moves: bool = True,
) -> None:
    for i, t in enumerate((T0, T0 + DT)):
        fsync = grown(FAST, i if fsync_moves else 0)
        write_metrics(root, "etcd", "etcd-0", t, etcd_text(changes=changes[i], fsync=fsync))
        for name in ("apiserver-a", "apiserver-b"):
            wait = grown(FAST, i if wait_moves else 0)
            text = apiserver_text(
                requests=1000 + 600 * i, rejected=0, queued=0, wait=wait, start=T0 - 86400
            )
            write_metrics(root, "apiserver", name, t, text)


def nodes_bundle(root: Path, zones: dict[str, tuple[int, int]]) -> None:
    nodes, leases = zone_nodes(zones, T0 + DT)
    write_list(root, "nodes", "NodeList", nodes)
    write_list(root, "leases", "LeaseList", leases)


def test_zone_outage_makes_p4_suspect_and_names_the_zone(tmp_path: Path) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (0, 10), "zone-b": (10, 0), "zone-c": (10, 0)})
    code, doc = triage_json(tmp_path)
    p4 = paths(doc)["P4"]
    assert code == 1 and p4["verdict"] == "suspect"
    assert "zone zone-a" in p4["conclusion"] and "shared parts" in p4["conclusion"]
    assert "Lease lag only there" in p4["conclusion"]
    zones = {
        z["zone"]: (z["total"], z["not_ready"], z["state"])
        for z in doc["signals"]["nodes"]["zones"]
    }
    assert zones == {
        "zone-a": (10, 10, "FullDisruption"),
        "zone-b": (10, 0, "Normal"),
        "zone-c": (10, 0, "Normal"),
    }
    assert doc["signals"]["nodes"]["total"] == 30 and doc["signals"]["nodes"]["not_ready"] == 10


def test_two_not_ready_nodes_are_a_near_miss(tmp_path: Path) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (8, 2), "zone-b": (10, 0)})
    code, doc = triage_json(tmp_path)
    assert paths(doc)["P4"]["verdict"] == "clear"
    assert paths(doc)["ETCD"]["verdict"] == "clear"
    assert [p["id"] for p in doc["paths"] if p["verdict"] == "suspect"] == []
    # no path is suspect, but the two nodes' Leases (5 min old) make the Lease lag p99
    # critical: not "no incident", an incident with no probable cause yet (exit 1)
    assert doc["headline"].startswith("No probable cause yet: 1 critical finding: KT-NODE-004")
    assert code == 1


def test_apf_saturation_rates_and_wait_quantile(tmp_path: Path) -> None:
    before = [("0.005", 10), ("0.02", 20), ("1", 30), ("5", 40), ("+Inf", 40)]
    after = [("0.005", 10), ("0.02", 20), ("1", 30), ("5", 140), ("+Inf", 150)]
    for i, (t, wait, rejected) in enumerate(((T0, before, 0), (T0 + DT, after, 300))):
        text = apiserver_text(
            requests=1000 + 600 * i, rejected=rejected, queued=200, wait=wait, start=T0 - 86400
        )
        write_metrics(tmp_path, "apiserver", "apiserver-a", t, text)
        write_metrics(tmp_path, "etcd", "etcd-0", t, etcd_text(changes=1, fsync=FAST))
    code, doc = triage_json(tmp_path)
    (row,) = [r for r in doc["signals"]["apf"] if r["priority_level"] == "workload-low"]
    assert row["rejected_per_s"] == pytest.approx(300 / DT)
    increase = [(float(le), a - b) for (le, a), (_, b) in zip(after, before, strict=True)]
    assert row["wait_p99_s"] == pytest.approx(histogram_quantile(0.99, increase))
    assert row["in_queue"] == 200
    (api,) = doc["signals"]["apiservers"]
    assert api["requests_per_s"] == pytest.approx((600 + 300) / DT)
    p = paths(doc)
    assert p["P1"]["verdict"] == "suspect" and p["API-429"]["verdict"] == "suspect"
    assert p["API-429"]["conclusion"].startswith("noisy holds 200 of 200 queued in workload-low")
    assert code == 1


def test_apf_near_miss_is_not_suspect(tmp_path: Path) -> None:
    slowish = [("0.005", 10), ("0.5", 100), ("1", 100), ("+Inf", 100)]
    for i, t in enumerate((T0, T0 + DT)):
        scaled = [(le, c * (i + 1)) for le, c in slowish]
        text = apiserver_text(requests=1000 * (i + 1), rejected=0, queued=0, wait=scaled, start=T0)
        write_metrics(tmp_path, "apiserver", "apiserver-a", t, text)
    _, doc = triage_json(tmp_path)
    assert paths(doc)["P1"]["verdict"] != "suspect"
    assert paths(doc)["API-429"]["verdict"] != "suspect"


@pytest.mark.parametrize(("changes", "verdict"), [((1, 1), "clear"), ((1, 3), "suspect")])
def test_etcd_leader_changes_between_scrapes(
    tmp_path: Path, changes: tuple[int, int], verdict: str
) -> None:
    healthy_control_plane(tmp_path, changes=changes)
    _, doc = triage_json(tmp_path)
    (row,) = doc["signals"]["etcd"]
    assert row["leader_changes"] == changes[1] - changes[0]
    assert row["window"] == DT
    assert paths(doc)["ETCD"]["verdict"] == verdict


def test_a_histogram_with_no_observations_in_the_window_is_unknown_never_ok(
    tmp_path: Path,
) -> None:
    """etcd run with --unsafe-no-fsync never observes a WAL fsync: its histogram does not
    move between the scrapes. That is no reading, not a healthy one (it read "ok, 0.0,
    no observations in window")."""
    healthy_control_plane(tmp_path, fsync_moves=False)
    code, doc = triage_json(tmp_path)
    etcd = paths(doc)["ETCD"]
    fsync = next(e for e in etcd["evidence"] if e["id"] == "etcd.wal_fsync_p99")
    assert (fsync["status"], fsync["value"]) == ("unknown", None)
    assert "no observations in window" in fsync["detail"]
    assert etcd["verdict"] == "unknown" and code == 0


def test_an_apf_wait_with_no_observations_is_null_with_its_reason(tmp_path: Path) -> None:
    """No request waited in the window: the JSON's wait p99 is no reading (null, and why),
    never a healthy 0 (it was 0)."""
    healthy_control_plane(tmp_path, wait_moves=False)
    _, doc = triage_json(tmp_path)
    rows = doc["signals"]["apf"]
    assert rows and all(r["wait_p99_s"] is None and r["wait_p99_reason"] for r in rows), rows
    wait = next(
        e
        for p in doc["paths"]
        if p["id"] == "P1"
        for e in p["evidence"]
        if e["id"] == "apf.wait_p99"
    )
    assert (wait["status"], wait["value"]) == ("unknown", None), wait


def test_missing_files_are_unknown_not_errors(tmp_path: Path) -> None:
    nodes_bundle(tmp_path, {"zone-a": (10, 0)})
    code, doc = triage_json(tmp_path)
    assert doc["errors"] == [] and code == 0
    assert "api/pods.json" in doc["source"]["missing"] and "metrics/" in doc["source"]["missing"]
    p2 = paths(doc)["P2"]
    assert p2["verdict"] == "unknown"
    assert p2["evidence"][0]["status"] == "unknown" and p2["evidence"][0]["value"] is None
    assert doc["signals"]["scheduler"]["pending_by_reason"] is None


def test_malformed_files_name_file_and_line_and_the_rest_is_used(tmp_path: Path) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (0, 10), "zone-b": (10, 0)})
    (tmp_path / "api" / "leases.json").write_text('{"items": [\n  {"a": 1},\n  oops\n]}\n')
    prom = tmp_path / "metrics" / "etcd" / "etcd-0" / f"{T0 + DT}.prom"
    lines = prom.read_text().splitlines()
    lines[1] = "etcd_server_is_leader one"
    prom.write_text("\n".join(lines) + "\n")
    code, out, err = run(["triage", "--bundle", str(tmp_path), "--output", "json"])
    doc = json.loads(out)
    assert f"metrics/etcd/etcd-0/{T0 + DT}.prom:2: " in "\n".join(doc["errors"])
    assert any(e.startswith("api/leases.json:3: ") for e in doc["errors"])
    assert "api/leases.json:3" in err
    # the rest is used: nodes still make P4 suspect, the etcd file's other lines still count
    assert paths(doc)["P4"]["verdict"] == "suspect" and code == 1
    (row,) = doc["signals"]["etcd"]
    assert row["has_leader"] is True and row["quota_bytes"] == 2147483648


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    code, _, err = run(["triage", "--bundle", str(tmp_path / "nope")])
    assert code == 2 and "not a directory" in err
    code, _, err = run(["triage", "--bundle", str(tmp_path)])
    assert code == 2 and "no api/, metrics/ or apf/ directory" in err


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_text_and_markdown_show_suspects(tmp_path: Path, fmt: str) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (0, 10), "zone-b": (10, 0)})
    code, out, _ = run(["triage", "--bundle", str(tmp_path), "--output", fmt])
    assert code == 1
    assert "P4" in out and "suspect" in out and "zone zone-a" in out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(prom=st.text(max_size=300), nodes=st.binary(max_size=200))
def test_any_file_content_never_crashes(tmp_path: Path, prom: str, nodes: bytes) -> None:
    root = tmp_path / "b"
    if root.exists():
        import shutil

        shutil.rmtree(root)
    write_metrics(root, "etcd", "e", T0, prom)
    (root / "api").mkdir(parents=True)
    (root / "api" / "nodes.json").write_bytes(nodes)
    code, doc = triage_json(root)
    assert code in (0, 1)
    for e in doc["errors"]:
        assert e.startswith((f"metrics/etcd/e/{T0}.prom", "api/nodes.json"))


def test_every_json_field_is_documented(tmp_path: Path) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (0, 10), "zone-b": (10, 0)})
    _, doc = triage_json(tmp_path)
    text = (Path(__file__).resolve().parents[2] / "docs" / "triage-json.md").read_text()

    def keys(obj: Any) -> set[str]:
        if isinstance(obj, dict):
            out = set(obj)
            for k, v in obj.items():
                if k not in ("pending_by_reason", "rejected_per_s_by_reason", "pending_by_queue"):
                    out |= keys(v)
            return out
        if isinstance(obj, list):
            return set().union(*(keys(v) for v in obj)) if obj else set()
        return set()

    undocumented = sorted(k for k in keys(doc) if f"`{k}`" not in text)
    assert undocumented == []
    # the contract's fixed names are all present
    assert {"version", "paths", "signals"} <= set(doc)
    assert {"id", "title", "verdict", "evidence"} <= set(doc["paths"][0])
    assert {"id", "status", "value", "unit", "detail"} <= set(doc["paths"][0]["evidence"][0])


def test_capacity_arithmetic_from_a_bundle(tmp_path: Path) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (10, 0), "zone-b": (6, 4)})
    _, doc = triage_json(tmp_path)
    cap = {c["id"]: c for c in doc["capacity"]}
    nodes_file = tmp_path / "api" / "nodes.json"
    assert cap["full_list_bytes.nodes"]["value"] == nodes_file.stat().st_size
    assert cap["full_list_bytes.nodes"]["detail"].startswith("20 objects x ")
    assert cap["heartbeat_writes_per_s"]["value"] == 20 / 10  # 20 nodes, 10 s renew interval
    # losing the zone with most Ready nodes (zone-a, 10) leaves zone-b's 6 Ready
    assert cap["capacity_after_zone_loss"]["value"] == 6
