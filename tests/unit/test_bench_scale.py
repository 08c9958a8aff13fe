"""The scale benchmark's pure parts: objects shaped like the real ones, tables, targets."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.scale import api, objects, tables, targets, tools
from benchmarks.scale.__main__ import kept_note
from benchmarks.scale.stats import spread
from ktop.model.events import PodWait, Readiness
from ktop.sources.convert import node_record, pending_pod_record

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL_NODES = json.loads((FIXTURES / "openshift-insights_gcp-3zone_nodelist.json").read_text())
REAL_POD = json.loads((FIXTURES / "openshift-insights_pending-pod_router-default.json").read_text())
ZONE = "topology.kubernetes.io/zone"


def _real_worker() -> dict[str, Any]:
    return next(
        n
        for n in REAL_NODES["items"]
        if "node-role.kubernetes.io/worker" in n["metadata"]["labels"]
    )


def test_nodes_are_copies_of_the_real_worker_spread_over_its_zones() -> None:
    real = _real_worker()
    zones = {n["metadata"]["labels"][ZONE] for n in REAL_NODES["items"]}
    made = list(objects.nodes(7, now=1_767_225_600.0))
    assert len({n["metadata"]["name"] for n in made}) == 7
    order = list(dict.fromkeys(n["metadata"]["labels"][ZONE] for n in REAL_NODES["items"]))
    assert Counter(n["metadata"]["labels"][ZONE] for n in made) == {
        order[0]: 3,
        order[1]: 2,
        order[2]: 2,
    }
    for body in made:
        meta = body["metadata"]
        assert not {"uid", "resourceVersion", "selfLink", "creationTimestamp"} & set(meta)
        assert meta["labels"]["kubernetes.io/hostname"] == meta["name"]
        kept = {k for k in real["metadata"]["labels"] if k not in ("kubernetes.io/hostname",)}
        assert kept <= set(meta["labels"])
        assert len(meta["managedFields"]) == len(real["metadata"]["managedFields"])
        assert body["status"]["nodeInfo"] == real["status"]["nodeInfo"]
        rec = node_record(body, objects.RACK_LABEL)
        assert rec.ready == Readiness.TRUE
        assert rec.zone in zones and rec.rack.startswith(rec.zone)


def test_pending_pods_keep_the_real_schedulers_verdict() -> None:
    real_message = REAL_POD["status"]["conditions"][0]["message"]
    made = list(objects.pending_pods(3))
    assert len({b["metadata"]["name"] for b, _ in made}) == 3
    for body, status in made:
        assert "ownerReferences" not in body["metadata"]
        assert body["spec"]["schedulerName"] != REAL_POD["spec"]["schedulerName"]
        assert body["spec"]["containers"] == REAL_POD["spec"]["containers"]
        body = {**body, "status": status["status"]}
        body["metadata"] = {**body["metadata"], "creationTimestamp": "2026-01-01T00:00:00Z"}
        rec = pending_pod_record(body)
        assert rec is not None
        assert rec.wait == PodWait.UNSCHEDULABLE
        assert rec.message == real_message


def test_lease_times_are_kubernetes_timestamps() -> None:
    lease = objects.lease("n1", 1_767_225_600.25)
    assert lease["spec"]["renewTime"] == "2026-01-01T00:00:00.250000Z"
    assert lease["spec"]["holderIdentity"] == "n1"


def _results() -> dict[str, Any]:
    return {
        "sizes": [
            {
                "nodes": 10_000,
                "pods": 1_000,
                "tools": {
                    "ktop": {"wall_s": [10.0, 12.0, 11.0], "bytes": [30e6, 32e6, 31e6]},
                    "kubectl get nodes -o json": {"wall_s": [30.0, 34.0, 32.0], "bytes": [70e6]},
                    "k9s": {"not_measured": "k9s not built"},
                },
                "steady": {"ktop_kb_per_s_real_rate": 250.0},
            }
        ],
        "pure": {"pipeline_events_per_s": 6_000.0},
    }


def test_targets_compare_medians_in_the_right_direction() -> None:
    by_what = {t.what: t for t in targets.TARGETS}
    r = _results()
    wall = next(t for w, t in by_what.items() if "wall time" in w)
    assert wall.measured(r) == pytest.approx(11.0 / 32.0)
    assert wall.met(wall.measured(r)) is True
    share = next(t for w, t in by_what.items() if "bytes pulled" in w)
    assert share.measured(r) == pytest.approx(31e6 / 70e6)
    assert share.met(share.measured(r)) is False
    events = next(t for t in targets.TARGETS if t.higher_is_better)
    assert events.met(6_000.0) is True and events.met(4_999.0) is False
    steady = next(t for w, t in by_what.items() if "steady state" in w)
    assert steady.measured(r) is None  # only a lab with rack labels was run
    no_racks = {**r["sizes"][0], "racks": False, "steady": {"ktop_kb_per_s_real_rate": 250.0}}
    r["sizes"][0]["steady"] = {"ktop_kb_per_s_real_rate": 50.0}
    r["sizes"].append(no_racks)
    assert steady.measured(r) == 250.0  # the lab without rack labels, the one runs measure now
    assert steady.met(steady.measured(r)) is False
    frame = next(t for w, t in by_what.items() if "frame" in w)
    assert frame.measured(r) is None and frame.met(None) is None


def test_recording_targets_read_the_one_hour_10000_node_run() -> None:
    def row(minutes: float, nodes: int, per_hour: float, seek_max: float) -> dict[str, Any]:
        return {"scenario": "steady", "nodes": nodes, "minutes": minutes, "bytes": 1,
                "mb_per_hour": per_hour, "generate_s": 1.0, "write_ms_per_s": 1.0,
                "seek_ms_median": 1.0, "seek_ms_max": seek_max, "folded_max": 1}  # fmt: skip

    runs = [row(20, 10_000, 1.0, 1.0), row(60, 1_000, 2.0, 2.0), row(60, 10_000, 19.5, 250.0)]
    r = {"recording": {"runs": runs}}
    size = next(t for t in targets.TARGETS if "bytes per hour" in t.what)
    seek = next(t for t in targets.TARGETS if "seek" in t.what)
    assert (size.measured(r), size.met(size.measured(r))) == (19.5, True)
    assert (seek.measured(r), seek.met(seek.measured(r))) == (250.0, False)
    short = {"recording": {"runs": runs[:1]}}  # no one-hour recording: its seek is not measured
    assert (size.measured(short), seek.measured(short)) == (1.0, None)
    assert seek.measured({}) is None
    text = tables.recording_table(r)
    assert "| steady | 10,000 | 60 min |" in text and "0.00 s / 0.25 s" in text
    assert "Not measured" in tables.recording_table({})


def test_tables_show_medians_ranges_and_what_was_not_measured() -> None:
    text = tables.start_table(_results())
    row = next(line for line in text.splitlines() if "| ktop |" in line)
    assert "11.0 (10.0-12.0)" in row
    assert "31.0 (30.0-32.0)" in row
    assert "not measured: k9s not built" in text
    assert "**missed**" in tables.targets_table(_results())


def test_spread_of_one_value_and_of_none() -> None:
    assert spread([]) == "-"
    assert spread([2.0]) == "2.0"
    assert spread([3e6, 1e6, 2e6], "{:.0f}", 1e6) == "2 (1-3)"


def test_screen_predicates() -> None:
    assert tools.k9s_shows_all(10_000)(" Nodes(all)[10000] ")
    assert tools.k9s_shows_all(1_000)("── nodes(all)[1,000] ──")
    assert not tools.k9s_shows_all(10_000)(" Nodes(all)[9999] ")
    assert tools.ktop_shows_all(10_000)("zones 10,000/10,000 ready")
    assert not tools.ktop_shows_all(10_000)("9,999/10,000 ready")


def test_runs_at_parses_sizes_and_refuses_nonsense() -> None:
    from benchmarks.scale.__main__ import _runs_at

    assert _runs_at(["50000=1", "100000=2"]) == {50_000: 1, 100_000: 2}
    for bad in ("50000", "x=1", "50000=0", "50000=a"):
        with pytest.raises(SystemExit, match="NODES=RUNS"):
            _runs_at([bad])


def test_the_header_names_the_sizes_measured_fewer_times() -> None:
    results = {
        "meta": {"date": "d", "command": "c", "machine": "m", "runs": 3},
        "sizes": [
            {"nodes": 10_000, "runs": 3},
            {"nodes": 50_000, "runs": 1},
            {"nodes": 50_000, "runs": 1, "racks": False},
        ],
    }
    header = tables.meta_block(results).splitlines()[0]
    assert "3 runs per figure (50,000 nodes: 1; 50,000 nodes without rack labels: 1)" in header
    assert "10,000 nodes" not in header


def test_pure_figures_measured_later_replace_the_old_and_say_so() -> None:
    from benchmarks.scale.__main__ import with_pure

    results = {
        "meta": {"date": "d", "command": "c", "machine": "m", "runs": 3},
        "sizes": [{"nodes": 10_000, "runs": 3}],
        "pure": {"overview_frame_ms_100k": 20.0},
    }
    merged = with_pure(results, {"overview_frame_ms_100k": 15.0}, "the run of later (`p`)")
    assert merged["pure"] == {"overview_frame_ms_100k": 15.0}
    assert merged["sizes"] == results["sizes"]
    assert results["pure"] == {"overview_frame_ms_100k": 20.0}  # the input is left alone
    header = tables.meta_block(merged)
    assert "Figures without an apiserver: from the run of later (`p`)." in header
    assert "Figures without an apiserver" not in tables.meta_block(results)


def test_tables_do_not_depend_on_the_order_the_results_were_saved_in() -> None:
    """The run writes the docs from memory; ``docs`` from the saved (key-sorted) file."""
    feeds = {
        "b feed": {"events_per_s": 1, "bytes_per_event": 2, "real_events_per_s": 1,
                   "kb_per_s_real_rate": 0.0},
        "a feed": {"events_per_s": 1, "bytes_per_event": 2, "real_events_per_s": 1,
                   "kb_per_s_real_rate": 5.0},
        "c feed": {"events_per_s": 1, "bytes_per_event": 2, "real_events_per_s": 1,
                   "kb_per_s_real_rate": 0.0},
    }  # fmt: skip
    reps = {"y": 1_000_000, "x": 2_000_000, "z": 1_000_000}
    size = {"nodes": 10, "feeds": feeds, "representations": reps}
    saved = json.loads(json.dumps({"sizes": [size]}, sort_keys=True))
    as_run = {"sizes": [size]}
    assert tables.feeds_table(saved) == tables.feeds_table(as_run)
    assert tables.representations_table(saved) == tables.representations_table(as_run)
    names = [line.split("|")[2].strip() for line in tables.feeds_table(as_run).splitlines()[2:]]
    assert names == ["a feed", "b feed", "c feed"]  # costliest first, then by name


def test_a_tool_that_would_not_fit_beside_the_lab_is_not_started() -> None:
    from benchmarks.scale.__main__ import rss_per_node
    from benchmarks.scale.run import MEMORY_MARGIN, MEMORY_RESERVE_MB, fits

    sizes = [
        {"nodes": 10_000, "tools": {"k9s": {"peak_rss_mb": [1_000.0, 1_200.0]}}},
        {"nodes": 50_000, "tools": {"k9s": {"peak_rss_mb": [5_000.0]}, "ktop": {}}},
        {"nodes": 1_000, "tools": {"k9s": {"peak_rss_mb": [400.0]}}},
    ]
    per_node = rss_per_node(sizes)
    assert per_node == {"k9s": (0.1, 50_000)}  # the largest size measured, its largest run
    need = 0.1 * 100_000 * MEMORY_MARGIN
    assert fits("k9s", 100_000, per_node, need + MEMORY_RESERVE_MB) is None
    why = fits("k9s", 100_000, per_node, need + MEMORY_RESERVE_MB - 1)
    assert why is not None and "5,000 MB at 50,000 nodes" in why
    assert fits("kubectl get nodes -o json", 100_000, per_node, 0.0) is None  # not known


def test_the_floor_is_a_row_beside_the_tools_and_the_100k_targets_read_the_split_run() -> None:
    s = {
        "nodes": 100_000,
        "racks": False,
        "pods": 1_000,
        "runs": 1,
        "floor": {"wall_s": [7.5], "bytes": [3.2e6], "requests": [20]},
        "representations_wire": {"nodes as JSON (kubectl get -o json)": 40e6},
        "tools": {
            "ktop": {"first_answer_s": [4.0], "wall_s": [18.0], "bytes": [9e6]},
            "ktop (UI)": {"wall_s": [27.0]},
        },
    }
    r: dict[str, Any] = {"sizes": [s]}
    floor = next(line for line in tables.start_table(r).splitlines() if tables.FLOOR in line)
    assert "| 7.5 |" in floor and "| 3.2 |" in floor and "| 20 |" in floor
    by_what = {t.what: t for t in targets.TARGETS}
    got = {w: t.measured(r) for w, t in by_what.items() if w.startswith("100,000 nodes without")}
    assert sorted(v for v in got.values() if v is not None) == pytest.approx(
        sorted([4.0, 18.0, 27.0 / 18.0, 9e6 / 40e6])
    )
    met = {w: by_what[w].met(v) for w, v in got.items()}
    assert sorted(met.values(), key=str) == [False, False, True, True]  # 1.5x and 0.225x missed


def test_the_phases_table_orders_feeds_by_when_they_were_synced() -> None:
    s = {
        "nodes": 10_000,
        "racks": False,
        "floor": {"wall_s": [0.9]},
        "tools": {
            "ktop": {
                "wall_s": [3.4],
                "cpu_s": [2.5],
                "phases": {"nodes": 3.1, "leases": 2.0, "events": 0.4},
            }
        },
    }
    text = tables.phases_table({"sizes": [s]})
    row = next(line for line in text.splitlines() if "10,000" in line)
    assert "events 0.4, leases 2.0, nodes 3.1" in row
    assert "| 3.4 | 2.5 | 0.9 |" in row
    assert "Not measured" in tables.phases_table({"sizes": [{"nodes": 1, "tools": {}}]})


def test_a_merge_names_the_rows_it_kept_with_their_labels_and_origin() -> None:
    kept = [{"nodes": 1000}, {"nodes": 10000, "racks": True}, {"nodes": 50000, "racks": False}]
    one_run = {"date": "2026-12-01 10:00 UTC", "command": "python -m benchmarks.scale run"}
    note = kept_note(kept, one_run)
    assert note.startswith("1,000 and 10,000 nodes with rack labels; 50,000 nodes without")
    assert note.endswith("from the run of 2026-12-01 10:00 UTC (`python -m benchmarks.scale run`)")
    # a file that was itself a merge holds rows of several runs: none is named
    assert kept_note(kept[:1], {**one_run, "merged": "..."}) == (
        "1,000 nodes with rack labels: from earlier runs"
    )


def test_the_probe_waits_for_a_quiet_and_idle_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy windows and a node just written keep it waiting; the first calm window after
    the node watch's quiet spell ends the wait, whose figures are those of that window."""
    import asyncio
    import time

    from benchmarks.scale import run

    cores = [2.0, 1.5, 0.2, 0.2, 0.1]  # per window: the lab absorbing new objects, then calm
    lab_cpu = [0.0]
    windows: list[float] = []

    class Watch:
        last = time.monotonic()  # a node was written just now

    async def window(seconds: float) -> None:  # the settle loop's only wait
        lab_cpu[0] += cores[min(len(windows), len(cores) - 1)] * seconds
        windows.append(seconds)
        if len(windows) < 4:
            Watch.last = time.monotonic()  # nodes still being written
        else:
            Watch.last = time.monotonic() - 2 * run.QUIET_S

    monkeypatch.setattr(run, "lab_cpu_s", lambda _lab_dir: lab_cpu[0])
    monkeypatch.setattr(asyncio, "sleep", window)
    out = asyncio.run(run.settle(Path("."), Watch()))  # type: ignore[arg-type]
    assert len(windows) == 4  # window 3 was calm but a node had just changed
    assert out["lab_cores_at_probe"] == pytest.approx(0.2)


def _pb_field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field, encoded here independently of the reader."""
    out, n = bytearray([number << 3 | 2]), len(payload)
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + payload


def test_protobuf_continue_reads_a_real_page() -> None:
    """The token of a real apiserver's protobuf page names the page's last node as the
    next list's start, as the JSON form's token does."""
    body = (FIXTURES / "kube-apiserver-1.35_nodelist-limit1.pb").read_bytes()
    token = api.protobuf_continue(body)
    decoded = json.loads(base64.b64decode(token + "=" * (-len(token) % 4)))
    assert decoded["start"].endswith("\x00")
    assert decoded["start"][:-1].encode() in body
    assert str(decoded["rv"]).encode() in body


def test_protobuf_continue_walks_other_fields_and_ends_empty() -> None:
    varint_field = bytes([1 << 3 | 0, 0x96, 0x01])  # field 1, varint 150
    fixed64 = bytes([9 << 3 | 1]) + bytes(8)
    meta = varint_field + fixed64 + _pb_field(2, b"12345") + _pb_field(3, b"tok" * 50)
    item = _pb_field(1, b"x" * 300)
    body = api.PROTOBUF_MAGIC + _pb_field(1, b"\n\x02v1") + _pb_field(2, _pb_field(1, meta) + item)
    assert api.protobuf_continue(body) == "tok" * 50
    last = api.PROTOBUF_MAGIC + _pb_field(2, _pb_field(1, _pb_field(2, b"9")))
    assert api.protobuf_continue(last) == ""
    with pytest.raises(ValueError):
        api.protobuf_continue(b"{}")


def test_the_lab_is_at_rest_when_quiet_or_no_longer_falling() -> None:
    from benchmarks.scale import run

    low = run.SETTLE_CORES / 2
    assert run.at_rest([3.0, low])
    assert not run.at_rest([])
    falling = [1.9, 1.5, 1.1]
    assert not run.at_rest(falling)  # still absorbing: more to wait for
    flat = [1.5, 0.7 + run.SETTLE_PLATEAU_CORES * 0.9, 0.7, 0.7 + run.SETTLE_PLATEAU_CORES / 2]
    assert run.at_rest(flat)  # a large lab's own steady work
    assert not run.at_rest(flat[-2:])  # too few windows to tell
    busy = [run.SETTLE_PLATEAU_MAX_CORES + 0.9, run.SETTLE_PLATEAU_MAX_CORES + 0.92] * 2
    assert not run.at_rest(busy)  # flat, but a busy lab: not at rest
