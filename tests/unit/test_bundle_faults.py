"""A bundle's input faults are named: a malformed metrics line by file and line (the rest
of the file and of the bundle still used), and a file the layout has no place for or a
metrics file with no sample ktop reads by file (they were skipped without a word).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from ktop.cli import main
from tests.unit.bundles import T0, etcd_text, write_metrics
from tests.unit.test_bundle_triage import DT, FAST, healthy_control_plane, nodes_bundle


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def triage_json(*args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(["triage", *args, "--output", "json"])
    return code, json.loads(out), err


def test_a_malformed_metrics_line_is_named_and_the_rest_of_the_file_is_used(
    tmp_path: Path,
) -> None:
    healthy_control_plane(tmp_path)
    nodes_bundle(tmp_path, {"zone-a": (10, 0), "zone-b": (10, 0)})
    prom = tmp_path / "metrics" / "etcd" / "etcd-0" / f"{T0 + DT}.prom"
    lines = prom.read_text().splitlines()
    bad = lines.index("etcd_server_has_leader 1") + 1  # 1-based: the line after it
    lines.insert(bad, 'etcd_server_is_leader{member="x" 1')
    prom.write_text("\n".join(lines) + "\n")
    code, doc, err = triage_json("--bundle", str(tmp_path))
    where = f"metrics/etcd/etcd-0/{T0 + DT}.prom:{bad + 1}: "
    assert [e for e in doc["errors"] if e.startswith(where)], doc["errors"]
    assert where in err
    (row,) = doc["signals"]["etcd"]
    assert row["has_leader"] is True and row["window"] == DT  # both scrapes were used
    assert code == 0


def test_misplaced_and_unreadable_metrics_files_are_reported_not_skipped(tmp_path: Path) -> None:
    healthy_control_plane(tmp_path)
    # a scrape put beside the instance directories, one at the top, and an HTML error
    # page saved as a scrape: each used to be skipped without a word
    (tmp_path / "metrics" / "etcd" / f"{T0}.prom").write_text(etcd_text(changes=1, fsync=FAST))
    (tmp_path / "metrics" / "notes.txt").write_text("captured by hand\n")
    write_metrics(tmp_path, "etcd", "etcd-1", T0, "<html><body>403 Forbidden</body></html>\n")
    (tmp_path / "metrics" / "etcd" / "etcd-0" / "old").mkdir()
    code, doc, _ = triage_json("--bundle", str(tmp_path))
    errors = "\n".join(doc["errors"])
    assert f"metrics/etcd/{T0}.prom: " in errors
    assert "metrics/notes.txt: " in errors
    assert f"metrics/etcd/etcd-1/{T0}.prom: no sample of a metric family" in errors
    assert "metrics/etcd/etcd-0/old: " in errors
    # the rest is still used
    assert {r["instance"] for r in doc["signals"]["etcd"]} >= {"etcd-0"}
    assert code in (0, 1)
