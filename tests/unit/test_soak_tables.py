"""The soak benchmark's pure parts: the plan, the last half hour's verdict, the docs section."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from benchmarks import soak
from ktop.docgen import MarkerError


def flat(minutes: int, value: float) -> dict[int, float]:
    return dict.fromkeys(range(minutes + 1), value)


def test_an_hour_is_judged_on_its_last_half_hour() -> None:
    assert soak.judged_window(60) == (30, 30)
    assert soak.judged_window(90) == (60, 30)
    assert soak.judged_window(3) == (2, 1)


def test_growth_is_the_highest_after_the_mark_against_the_mark() -> None:
    rss = flat(60, 100.0)
    rss[10] = 150.0  # before the mark: not judged
    rss[45] = 104.0
    rss[59] = 103.0
    v = soak.verdict(rss, 60)
    # (104 - 100) / 100, worked out by hand
    assert v["mark_minute"] == 30
    assert v["rss_at_mark_mb"] == 100.0
    assert v["max_after_mb"] == 104.0
    assert v["max_after_minute"] == 45
    assert v["growth"] == pytest.approx(0.04)
    assert v["passed"] is True
    assert v["samples_after_mark"] == 30


def test_more_than_five_percent_fails_and_exactly_five_passes() -> None:
    rss = flat(60, 200.0)
    rss[60] = 211.0  # (211 - 200) / 200 = 5.5%
    v = soak.verdict(rss, 60)
    assert v["growth"] == pytest.approx(0.055)
    assert v["passed"] is False
    rss[60] = 210.0  # 10 / 200 = 5% exactly: at most 5% passes
    assert soak.verdict(rss, 60)["passed"] is True


def test_memory_that_falls_after_the_mark_is_negative_growth() -> None:
    rss = {m: 120.0 - m / 10 for m in range(61)}  # 117 at minute 30, 116.9 at 31
    v = soak.verdict(rss, 60)
    assert v["rss_at_mark_mb"] == pytest.approx(117.0)
    assert v["max_after_minute"] == 31
    assert v["growth"] == pytest.approx((116.9 - 117.0) / 117.0)
    assert v["passed"] is True


def test_no_verdict_without_the_mark_or_anything_after_it() -> None:
    rss = flat(60, 100.0)
    del rss[30]
    assert soak.verdict(rss, 60)["passed"] is None
    assert soak.verdict(flat(29, 100.0), 60)["growth"] is None


def test_the_plan_rotates_zones_and_every_outage_recovers_inside_the_run() -> None:
    zones = ("zone-a", "zone-b", "zone-c")
    steps = soak.plan(60, soak.Cadence(), zones)
    downs = [s for s in steps if s.action == "zone down, pods created"]
    backs = [s for s in steps if s.action == "zone back"]
    # first at 30 s, then every 240 s while the recovery 120 s later is before 3,600 s
    assert [s.t_s for s in downs] == [30.0 + 240 * i for i in range(15)]
    assert [s.zone for s in downs[:4]] == ["zone-a", "zone-b", "zone-c", "zone-a"]
    assert [b.t_s - d.t_s for d, b in zip(downs, backs, strict=True)] == [120.0] * 15
    assert max(s.t_s for s in steps) < 3600
    assert [s.t_s for s in steps] == sorted(s.t_s for s in steps)
    assert len(soak.plan(3, soak.Cadence(), zones)) == 3  # one cycle in a 3-minute smoke run


def test_the_screen_is_read_for_its_clock_and_ready_count() -> None:
    screen = (
        "nodes  ready/total 667/1,000  NR+Unk 333\n"
        "zone-a 0/334\n"
        "live ktop-e2e │ 12:00:05Z │ apf 1s api 1s etcd 2s sched 1s nodes 1s │ 2 crit\n"
    )
    assert soak.status_clock(screen) == "12:00:05"
    assert soak.status_line(screen).startswith("live ktop-e2e")
    assert soak.ready_shown(screen, 1000) == 667
    assert soak.ready_shown("10/10,000", 1000) is None
    now = datetime(2026, 1, 1, 12, 0, 8, tzinfo=UTC)
    assert soak.clock_lag_s("12:00:05", now) == pytest.approx(3.0)
    assert soak.clock_lag_s("23:59:59", datetime(2026, 1, 2, 0, 0, 1, tzinfo=UTC)) == 2.0


def results() -> dict[str, Any]:
    samples = [{"minute": m, "rss_mb": 100.0 + (m > 1), "load1": 1.0} for m in range(4)]
    events = [
        {"t_s": 30.0, "action": "zone down, pods created", "zone": "zone-a", "pods_created": 40},
        {"t_s": 150.0, "action": "zone back", "zone": "zone-a"},
    ]
    rss = {int(s["minute"]): float(s["rss_mb"]) for s in samples}
    return {
        "meta": {"nodes": 1000, "minutes": 3, "zones": ["zone-a"], "cadence": {}},
        "samples": samples,
        "events": events,
        "verdict": soak.verdict(rss, 3),
    }


def test_the_docs_rewrite_touches_only_the_soak_section(tmp_path: Path) -> None:
    other = (
        "<!-- BEGIN GENERATED scale-start: make docs -->\n"
        "| kept |\n"
        "<!-- END GENERATED scale-start -->\n"
    )
    before = "# Benchmarks\n\nprose before\n\n" + other + "\n"
    after = "\nprose after, with | a table | of its own |\n"
    doc = tmp_path / "benchmarks.md"
    doc.write_text(before + soak.begin() + "\nold soak figures\n" + soak.end() + after)
    soak.write_docs(results(), doc)
    text = doc.read_text()
    assert text.startswith(before + soak.begin() + "\n")
    assert text.endswith(soak.end() + after)
    assert "old soak figures" not in text
    body = text[len(before + soak.begin()) : -len(soak.end() + after)]
    assert "1,000 KWOK nodes" in body
    assert "| 3 | 101.0 |" in body
    assert "zone-a down" in body  # the churn in minute 1 (30 s after the start)
    # 3 minutes: mark at minute 2 (101 MB), highest after it 101 MB: +0.0%
    assert "growth +0.0%" in body and "**Last 1 minutes: passed.**" in body
    assert "from minute 0 (100.0 MB) to minute 2, RSS grew +1.0%" in body
    soak.write_docs(results(), doc)
    assert doc.read_text() == text  # the same results write the same document


def test_the_docs_rewrite_needs_its_markers_once() -> None:
    with pytest.raises(MarkerError):
        soak.replace_section("no markers here\n", "body")
    twice = (soak.begin() + "\nx\n" + soak.end() + "\n") * 2
    with pytest.raises(MarkerError):
        soak.replace_section(twice, "body")
