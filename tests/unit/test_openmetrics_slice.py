"""A timestamped OpenMetrics slice (``promtool tsdb dump-openmetrics``, a must-gather's
``monitoring/metrics/metrics.openmetrics``): promtool's own expected output parses as
its lines say (split here by hand), a slice written in that format from a real etcd
scrape gives each scrape back, and a must-gather with the slice gets rates from it.
"""

from __future__ import annotations

import contextlib
import gzip
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.model.events import Component, MetricsScraped
from ktop.model.openmetrics_line import SliceLineError, parse_sample
from ktop.sources.openmetrics_slice import read_slice
from tests.unit.bundles import FIXTURES
from tests.unit.test_must_gather import must_gather
from tests.unit.test_triage_json_errors import run, triage_json

PROMTOOL = [
    FIXTURES / "promtool_dump-openmetrics-test.prom",
    FIXTURES / "promtool_dump-openmetrics-roundtrip-test.prom",
]
ETCD = FIXTURES / "nri-k8s-1.35_etcd_metrics.prom"
T1 = 1_796_613_000.0


@pytest.mark.parametrize("path", PROMTOOL, ids=["counter-gauge", "histogram-summary-up"])
def test_promtools_own_output_parses_as_its_lines_say(path: Path) -> None:
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue
        head, value, stamp = line.rsplit(" ", 2)
        name, _, rest = head.partition("{")
        pairs = re.findall(r'(\w+)="([^"]*)"', rest)
        assert parse_sample(line) == (name, dict(pairs), float(value), float(stamp))


def test_escaped_label_values_are_unescaped() -> None:
    line = r'm{a="x\"y",b="back\\slash",c="two\nlines"} 1 5.000'
    assert parse_sample(line)[1] == {"a": 'x"y', "b": "back\\slash", "c": "two\nlines"}


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("m 1", "not 'name{labels} value timestamp'"),
        ('m{a="b"} one 1.0', "value 'one' is not a number"),
        ('m{a="b"} 1 -5', "is not a time"),
        ("m{a=b} 1 1.0", "labels not readable"),
    ],
    ids=["no-timestamp", "bad-value", "negative-time", "bad-labels"],
)
def test_a_line_that_is_not_a_sample_says_why(line: str, words: str) -> None:
    with pytest.raises(SliceLineError, match=re.escape(words)):
        parse_sample(line)


@pytest.mark.fuzz
@given(st.text(max_size=200))
def test_no_line_crashes_the_sample_parser(line: str) -> None:
    with contextlib.suppress(SliceLineError):
        parse_sample(line)


def _scrape_lines(text: str, at: float, bump: float) -> dict[tuple[str, str], str]:
    """A real exposition's samples as slice series (job and instance added), every
    counter and bucket grown by ``bump`` for a second scrape."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        name, _, rest = head.partition("{")
        pairs = dict(re.findall(r'(\w+)="([^"]*)"', rest))
        pairs.update(job="etcd", instance="10.0.0.5:2379")
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(pairs.items()))
        grows = name.endswith(("_total", "_bucket", "_count", "_sum"))
        v = float(value) + (bump if grows else 0.0)
        out[(name, labels)] = f"{name}{{{labels}}} {v!r} {at:.3f}"
    return out


def etcd_slice(path: Path, *, gz: bool = False) -> tuple[float, float]:
    """Two scrapes of the real etcd exposition, 30 s apart, in promtool's layout."""
    first = _scrape_lines(ETCD.read_text(), T1, 0.0)
    second = _scrape_lines(ETCD.read_text(), T1 + 30, 10.0)
    lines = [x for key in sorted(first) for x in (first[key], second[key])] + ["# EOF"]
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return T1, T1 + 30


def test_a_slice_gives_back_each_scrape_of_the_families_ktop_reads(tmp_path: Path) -> None:
    f = tmp_path / "metrics.openmetrics.gz"
    t1, t2 = etcd_slice(f, gz=True)
    read = read_slice(f)
    assert read.malformed == 0 and read.problems == []
    scrapes = [e for e in read.events if isinstance(e, MetricsScraped)]
    assert [(e.at, e.target.component, e.target.instance) for e in scrapes] == [
        (t1, Component.ETCD, "10.0.0.5:2379"),
        (t2, Component.ETCD, "10.0.0.5:2379"),
    ]
    fsync = re.search(r"^etcd_disk_wal_fsync_duration_seconds_count (\S+)$", ETCD.read_text(), re.M)
    assert fsync is not None
    counts = [
        s.value
        for e in scrapes
        for s in e.samples
        if s.name == "etcd_disk_wal_fsync_duration_seconds_count"
    ]
    assert counts == [float(fsync.group(1)), float(fsync.group(1)) + 10.0]


def test_a_must_gather_with_a_slice_gets_rates_over_it(tmp_path: Path) -> None:
    root = must_gather(tmp_path)
    inner = next(p for p in root.iterdir() if p.is_dir())
    (inner / "monitoring" / "metrics").mkdir(parents=True)
    t1, t2 = etcd_slice(inner / "monitoring" / "metrics" / "metrics.openmetrics")
    code, doc, _ = triage_json("--bundle", str(root))
    assert code in (0, 1)
    assert doc["source"]["window_s"] == pytest.approx(t2 - t1)
    (member,) = doc["signals"]["etcd"]
    assert member["instance"] == "10.0.0.5:2379" and member["window"] != "lifetime"
    # ten more fsyncs in every bucket over 30 s: a p99 the window computes, not "lifetime"
    assert member["wal_fsync_p99_s"] is not None


def test_a_slice_recorded_replays_and_triages(tmp_path: Path) -> None:
    f = tmp_path / "metrics.openmetrics"
    t1, t2 = etcd_slice(f)
    out = tmp_path / "slice.ktrec"
    code, _, err = run(["record", "-o", str(out), "--from-openmetrics", str(f)])
    assert code == 0, err
    code, doc, _ = triage_json("--recording", str(out))
    assert doc["at"] == pytest.approx(t2)
    (member,) = doc["signals"]["etcd"]
    # every counter grew by 10 between the two scrapes: the window's count, not the lifetime's
    assert member["leader_changes"] == 10 and member["wal_fsync_p99_s"] is not None
    # ... and the JSON says so: the two scrapes' span, not "lifetime"
    assert member["window"] == pytest.approx(t2 - t1)
    p4 = next(p for p in doc["paths"] if p["id"] == "P4")
    assert p4["verdict"] == "unknown"
    assert any("rebuilt from a metrics slice" in e["detail"] for e in p4["evidence"])


def test_a_slice_without_a_family_ktop_reads_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "x.ktrec"
    code, _, err = run(["record", "-o", str(out), "--from-openmetrics", str(PROMTOOL[0])])
    assert code == 2 and "no sample of a family ktop reads" in err
    assert not out.exists()


def test_a_zone_outage_in_a_slice_is_named_from_the_controllers_gauges(tmp_path: Path) -> None:
    """Nodes are not in a slice, but the node lifecycle controller's zone gauges are: the
    span is read as metrics-only mode reads a cluster, and a zone the controller counts
    all down is the probable cause (P4), named with its count."""
    sizes = {"zone-a": (12, 0), "zone-b": (12, 12), "zone-c": (12, 1)}
    job = 'instance="10.0.0.9:10257",job="kube-controller-manager"'
    lines = []
    for at in (T1, T1 + 15, T1 + 30):
        for zone, (size, down) in sizes.items():
            labels = f'{job},zone="{zone}"'
            lines += [
                f"node_collector_zone_size{{{labels}}} {size} {at:.3f}",
                f"node_collector_unhealthy_nodes_in_zone{{{labels}}} {down} {at:.3f}",
                f"node_collector_zone_health{{{labels}}} {100 * (size - down) / size} {at:.3f}",
            ]
    f = tmp_path / "metrics.openmetrics"
    f.write_text("\n".join(sorted(lines, key=lambda line: line.split(" ")[0])) + "\n# EOF\n")
    out = tmp_path / "zones.ktrec"
    code, _, err = run(["record", "-o", str(out), "--from-openmetrics", str(f)])
    assert code == 0, err
    code, doc, _ = triage_json("--recording", str(out))
    assert code == 1 and doc["cause"]["id"] == "P4", doc["headline"]
    p4 = next(p for p in doc["paths"] if p["id"] == "P4")
    zone = next(e for e in p4["evidence"] if e["id"] == "nodes.zone_disruption")
    down = sum(d for _, d in sizes.values())
    assert f"{down} of {sum(s for s, _ in sizes.values())} nodes not Ready" in zone["detail"]
    assert "zone-b FullDisruption" in zone["detail"] and zone["status"] == "bad"
    assert "12 of 12 nodes NotReady in zone zone-b" in p4["conclusion"]
    lease = next(e for e in p4["evidence"] if e["id"] == "nodes.lease_lag_p99")
    assert lease["status"] == "unknown" and "rebuilt from a metrics slice" in lease["detail"]
