"""Each finding of a bundle's triage names the files it came from: every evidence (JSON)
the bundle files of its pane, and each suspect path (text, Markdown) the files its
evidence rests on. Expected paths are the files this test wrote, grouped by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from ktop.sources.bundle.parts import file_groups
from tests.unit.bundles import T0, write_list, write_metrics, zone_nodes
from tests.unit.test_bundle_triage import DT, healthy_control_plane, run


def zone_outage(root: Path) -> None:
    healthy_control_plane(root)
    nodes, leases = zone_nodes({"zone-a": (0, 10), "zone-b": (10, 0)}, T0 + DT)
    write_list(root, "nodes", "NodeList", nodes)
    write_list(root, "leases", "LeaseList", leases)


def test_every_evidence_names_the_files_of_its_pane(tmp_path: Path) -> None:
    zone_outage(tmp_path)
    code, out, _ = run(["triage", "--bundle", str(tmp_path), "--output", "json"])
    doc = json.loads(out)
    assert code == 1 and doc["minor_version"] >= 12
    etcd = ["metrics/etcd/etcd-0/*.prom (2 files)"]
    apiservers = [
        "metrics/apiserver/apiserver-a/*.prom (2 files)",
        "metrics/apiserver/apiserver-b/*.prom (2 files)",
    ]
    expected = {
        "etcd": apiservers + etcd,  # the apiservers' etcd client metrics feed etcd too
        "apf": apiservers,
        "apiservers": [*apiservers, "api/leases.json"],  # the apiservers' identity Leases
        "nodes": ["api/nodes.json", "api/leases.json"],
        "scheduler": apiservers,  # the apiservers' binding requests
    }
    seen = set()
    for p in doc["paths"]:
        for e in p["evidence"]:
            pane = e["pane"]
            if pane is None:
                assert e["files"] == []
                continue
            seen.add(pane)
            assert sorted(e["files"]) == sorted(expected.get(pane, [])), (pane, e["id"])
    assert {"etcd", "apf", "apiservers", "nodes"} <= seen


def test_a_suspect_path_says_what_it_read(tmp_path: Path) -> None:
    zone_outage(tmp_path)
    for fmt, prefix in (("text", "    read from: "), ("markdown", "Read from: ")):
        code, out, _ = run(["triage", "--bundle", str(tmp_path), "--output", fmt])
        assert code == 1
        lines = [ln for ln in out.splitlines() if ln.startswith(prefix)]
        assert lines, out
        # P4's evidence rests on the nodes and Leases (and the control plane's health)
        assert any("api/nodes.json" in ln and "api/leases.json" in ln for ln in lines), lines


def test_a_live_source_names_no_file() -> None:
    assert file_groups([]) == ()


def test_timed_files_of_one_directory_are_one_group_in_first_seen_order() -> None:
    paths = [
        "m/a/1.prom",
        "api/nodes.json",
        "m/a/2.prom",
        "m/b/1.prom",
        "m/a/3.txt",
        "api/leases.json",
        "m/a/4.5.prom",
    ]
    assert file_groups(paths) == (
        "m/a/*.prom (3 files)",
        "api/nodes.json",
        "m/b/1.prom",
        "m/a/3.txt",
        "api/leases.json",
    )


def test_a_file_that_could_not_be_used_is_not_named(tmp_path: Path) -> None:
    """A file the reader could not use is not named as a source of evidence."""
    healthy_control_plane(tmp_path)
    write_metrics(tmp_path, "etcd", "etcd-1", T0, "<html>not a scrape</html>\n")
    _, out, _ = run(["triage", "--bundle", str(tmp_path), "--output", "json"])
    doc = json.loads(out)
    named = {f for p in doc["paths"] for e in p["evidence"] for f in e["files"]}
    assert not any("etcd-1" in f for f in named), named
    assert any("etcd-1" in err for err in doc["errors"])
