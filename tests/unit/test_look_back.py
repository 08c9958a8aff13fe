"""A one-shot judges the recent past: etcd leader changes counted since a member started
within the look-back (real etcd dumps, checked against prometheus_client's parser), the
look-back as the model's window and the Prometheus backfill's range, and the look-back
stated in the report.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop import sampling
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Status, TriageReport, Verdict
from ktop.cli import parse_args
from ktop.commands import triage as triage_cmd
from ktop.commands.options import DEFAULT_LOOK_BACK_S, look_back_s, look_back_words
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Sample, Target
from ktop.model.exposition import parse_exposition
from ktop.model.model_inputs import ModelConfig
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import EtcdMemberRow
from ktop.model.wanted import FAMILIES
from ktop.scrub import Secrets
from ktop.sources.live.backfill import PrometheusBackfill, matrix_to_events
from ktop.ui.render.triage_text import to_markdown, to_text

FIXTURES = Path(__file__).parent.parent / "fixtures"
LEADER = "nri-k8s-1.35_etcd_metrics.prom"
"""etcd 3.6.6, the leader, which has seen one leader since it started."""
FOLLOWER = "qubership_etcd-3.4.3_follower_metrics.prom"
"""etcd 3.4.3, a follower that has seen 69 leaders since it started."""
CHANGES = "etcd_server_leader_changes_seen_total"
LOOK_BACK_S = 900.0


def _independent(fixture: str, name: str) -> float:
    """A sample's value as prometheus_client's own parser reads it."""
    for fam in text_string_to_metric_families((FIXTURES / fixture).read_text()):
        for s in fam.samples:
            if s.name == name:
                return float(s.value)
    raise AssertionError(f"{name} not in {fixture}")


def _samples(fixture: str, changes: float | None = None) -> tuple[Sample, ...]:
    """The dump's etcd samples, its leader-change count set to ``changes`` if given."""
    parsed = parse_exposition((FIXTURES / fixture).read_text(), FAMILIES[Component.ETCD])
    assert parsed.errors == ()
    if changes is None:
        return parsed.samples
    return tuple(replace(s, value=changes) if s.name == CHANGES else s for s in parsed.samples)


def _members(
    scrapes: Sequence[tuple[float, tuple[Sample, ...]]], members: int = 1, window_s: float = 900
) -> ClusterSnapshot:
    """A model of ``window_s`` fed every scrape for each of ``members`` members."""
    model = ClusterModel(ModelConfig(window_s=window_s))
    for at, samples in scrapes:
        for i in range(members):
            model.apply(MetricsScraped(at, Target(Component.ETCD, f"etcd-{i}:2379"), samples))
    return model.observe()


def _row(snap: ClusterSnapshot) -> EtcdMemberRow:
    return snap.etcd.members[0]


# ------------------------------------------------------------ since a member started


@pytest.mark.parametrize("fixture", [LEADER, FOLLOWER])
def test_a_member_started_within_the_window_counts_its_changes_since_then(fixture: str) -> None:
    started = _independent(fixture, "process_start_time_seconds")
    seen = _independent(fixture, CHANGES)
    snap = _members([(started + 120.0, _samples(fixture))])
    row = _row(snap)
    # one scrape, yet a window value: every count after the first leader it found
    assert row.leader_changes.value == seen - 1 and not row.leader_changes.lifetime
    assert row.leader_changes_since == started


@pytest.mark.parametrize("fixture", [LEADER, FOLLOWER])
def test_a_member_started_before_the_window_is_a_lifetime_count_from_one_scrape(
    fixture: str,
) -> None:
    started = _independent(fixture, "process_start_time_seconds")
    row = _row(_members([(started + LOOK_BACK_S + 60.0, _samples(fixture))]))
    assert row.leader_changes.lifetime and row.leader_changes.value == _independent(
        fixture, CHANGES
    )
    assert row.leader_changes_since is None


def test_a_member_started_before_the_window_counts_only_what_two_scrapes_saw() -> None:
    started = _independent(FOLLOWER, "process_start_time_seconds")
    at = started + LOOK_BACK_S + 60.0
    row = _row(_members([(at, _samples(FOLLOWER)), (at + 5.0, _samples(FOLLOWER))]))
    assert row.leader_changes.value == 0.0 and row.leader_changes_since is None


def test_scrapes_that_saw_the_restart_keep_their_own_increase() -> None:
    """ktop's scrapes span the member's restart: their increase (the reset counted from
    zero) stands, as Prometheus' ``increase`` counts it."""
    started = _independent(LEADER, "process_start_time_seconds")
    before = tuple(
        replace(s, value=started - 3600.0) if s.name == "process_start_time_seconds" else s
        for s in _samples(LEADER, changes=7.0)
    )
    after = _samples(LEADER)  # restarted at ``started``, one leader seen since
    row = _row(_members([(started - 10.0, before), (started + 30.0, after)]))
    assert row.leader_changes.value == _independent(LEADER, CHANGES)
    assert row.leader_changes_since is None


def _etcd_path(report: TriageReport) -> Any:
    return next(p for p in report.paths if p.id == "ETCD")


def test_changes_since_members_started_within_the_look_back_name_etcd() -> None:
    """Two members that started within the look-back have seen a second leader: the
    election happened within it, whenever ktop's own scrapes began."""
    started = _independent(LEADER, "process_start_time_seconds")
    scrapes = [(started + 300.0 + 5.0 * i, _samples(LEADER, changes=2.0)) for i in range(3)]
    report = triage(_members(scrapes, members=2))
    etcd = _etcd_path(report)
    changes = next(e for e in etcd.evidence if e.id == "etcd.leader_changes")
    assert changes.status is Status.WARN and changes.value == 1.0
    assert "counted since each member started within the 15m look-back" in changes.detail
    assert "etcd-0:2379 at 10:12:10 UTC: 1" in changes.detail  # the dump's own start
    assert report.cause is not None and report.cause.id == "ETCD"


def test_a_healthy_member_started_within_the_look_back_counts_no_change() -> None:
    started = _independent(LEADER, "process_start_time_seconds")
    scrapes = [(started + 300.0 + 5.0 * i, _samples(LEADER)) for i in range(3)]
    etcd = _etcd_path(triage(_members(scrapes, members=3)))
    changes = next(e for e in etcd.evidence if e.id == "etcd.leader_changes")
    assert changes.status is Status.OK and changes.value == 0.0
    assert etcd.verdict is not Verdict.SUSPECT


# ------------------------------------------------------------ Prometheus' look-back


def _prometheus_matrix(instance: str, points: Sequence[tuple[float, float]]) -> list[Any]:
    """A range selector's answer as Prometheus' HTTP API gives it (``result`` of a
    ``matrix``): values as strings, timestamps as numbers."""
    metric = {"__name__": CHANGES, "instance": instance, "job": "etcd"}
    return [{"metric": metric, "values": [[t, f"{v:g}"] for t, v in points]}]


@pytest.mark.parametrize(("window_s", "expected"), [(LOOK_BACK_S, 1.0), (300.0, 0.0)])
def test_prometheus_range_over_the_look_back_counts_an_election_ten_minutes_ago(
    window_s: float, expected: float
) -> None:
    """A member started long ago: its count went from 5 to 6 ten minutes ago. Read over
    the look-back, the change counts; over the dashboard's 300 s window, it does not."""
    now = 1_800_000_000.0
    points = [(t, 5.0 if t < now - 600 else 6.0) for t in range(int(now - 900), int(now), 15)]
    points = [(t, v) for t, v in points if t >= now - window_s]
    events = matrix_to_events(Component.ETCD, _prometheus_matrix("etcd-0:2379", points))
    model = ClusterModel(ModelConfig(window_s=window_s))
    for e in events:
        model.apply(e)
    assert _row(model.observe()).leader_changes.value == expected


def test_the_backfill_reads_the_look_back_raw_and_the_history_at_the_dashboards_window() -> None:
    backfill = PrometheusBackfill("prom", lambda: 0.0, window_s=LOOK_BACK_S)
    selectors = [s for _, s in backfill.window_reads()]
    assert f'{CHANGES}{{job=~".*etcd.*"}}[900s]' in selectors
    queries = [q for _, q in backfill.history_reads()]
    assert queries and not any("[900s]" in q for q in queries)
    assert any("[300s]" in q for q in queries)


def test_the_model_window_is_the_look_back_never_less_than_the_sample() -> None:
    assert sampling.model_window_s(LOOK_BACK_S, 15.0) == LOOK_BACK_S
    assert sampling.model_window_s(60.0, 120.0) == 120.0


def test_sample_live_reads_the_look_back(monkeypatch: pytest.MonkeyPatch) -> None:
    plans: list[Any] = []

    async def opened(plan: Any, secrets: Secrets) -> Any:
        plans.append(plan)
        raise RuntimeError("not connected in a unit test")

    monkeypatch.setattr(sampling, "open_source", opened)
    args = parse_args(["triage", "--look-back", "20m"])
    with pytest.raises(RuntimeError):
        asyncio.run(sampling.sample_live(args, None, 15.0, Secrets(), look_back_s(args)))
    assert plans[0].options.window_s == 1200.0


# ------------------------------------------------------------ the option and the report


@pytest.mark.parametrize(("given", "seconds"), [("15m", 900.0), ("1h", 3600.0), ("90", 90.0)])
def test_look_back_takes_a_duration(given: str, seconds: float) -> None:
    assert look_back_s(parse_args(["triage", "--look-back", given])) == seconds


def test_look_back_defaults_to_fifteen_minutes() -> None:
    assert look_back_s(parse_args(["triage"])) == DEFAULT_LOOK_BACK_S == 900.0


@pytest.mark.parametrize("given", ["30s", "2h", "soon"])
def test_look_back_out_of_range_is_refused(given: str) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(["triage", "--look-back", given])
    assert exc.value.code == 2


def test_look_back_goes_with_a_live_cluster_or_a_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["triage", "--recording", str(tmp_path / "r.ktop"), "--look-back", "5m"]
    args = parse_args([*argv, "--output", "json"])
    assert triage_cmd.run(args, Secrets()) == triage_cmd.EXIT_ERROR
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"] == "--look-back goes with a live cluster or a bundle"


@pytest.mark.parametrize(
    ("prometheus", "error", "judged"),
    [
        (True, "", sampling.LOOK_BACK_PROMETHEUS),
        (False, "", sampling.LOOK_BACK_SINCE_START),
        (True, "timed out", "Prometheus range queries as far as answered (timed out), else"),
    ],
)
def test_the_source_states_the_look_back(prometheus: bool, error: str, judged: str) -> None:
    info = sampling.look_back_info(LOOK_BACK_S, prometheus, error)
    assert info["look_back_s"] == LOOK_BACK_S and info["look_back_from"].startswith(judged)


def test_the_text_and_markdown_reports_state_the_look_back() -> None:
    source = sampling.look_back_info(LOOK_BACK_S, False, "")
    words = look_back_words(source)
    assert words == "the last 15m, judged from counters since each process started"
    report = triage(_members([]))
    assert f"look-back: {words}\n" in to_text(report, look_back=words)
    assert f"Look-back: {words}" in to_markdown(report, look_back=words)
    assert "look-back" not in to_text(report)  # a bundle or recording states none


def test_parse_args_namespace_has_no_look_back_for_other_commands() -> None:
    assert look_back_s(argparse.Namespace()) == DEFAULT_LOOK_BACK_S


def test_a_live_snapshot_states_its_look_back_and_why_prometheus_did_not_give_it() -> None:
    from ktop.commands import snapshot as snapshot_cmd
    from ktop.hub import Hub
    from ktop.model.events import FEED_PROMETHEUS_BACKFILL, FeedFailed
    from ktop.ui.display import Display

    hub = Hub(ClusterModel(ModelConfig(window_s=LOOK_BACK_S)))
    hub.model.apply(FeedFailed(1_000.0, FEED_PROMETHEUS_BACKFILL, "history backfill timed out"))
    published = hub.publish(force=True)
    assert published is not None
    why = snapshot_cmd.backfill_error(published)
    assert why == "history backfill timed out"
    words = look_back_words(sampling.look_back_info(hub.config.window_s, True, why))
    args = parse_args(["snapshot", "--width", "100"])
    text = snapshot_cmd.render(published, args, Display.from_options(ascii_only=False), [], words)
    assert (
        "look-back: the last 15m, judged from Prometheus range queries as far as answered "
        "(history backfill timed out), else counters since each process started"
    ) in text


def test_snapshot_look_back_goes_with_a_live_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    from ktop.cli import main

    assert main(["snapshot", "--demo", "steady", "--look-back", "5m"]) == 2
    assert "--look-back goes with a live cluster" in capsys.readouterr().err


@pytest.mark.parametrize(("look_back", "since_start"), [("10m", True), ("1m", False)])
def test_a_bundle_is_judged_over_the_look_back_before_its_capture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], look_back: str, since_start: bool
) -> None:
    """The real bundle's minikube member started 70 s before the capture: within a 10m
    look-back its count is since its start, within 1m it is a lifetime count."""
    from ktop.cli import main
    from tests.unit.bundles import REAL_CAPTURED_AT, real_bundle

    root = real_bundle(tmp_path)
    argv = ["triage", "--bundle", str(root), "--output", "json", "--look-back", look_back]
    main(argv)
    doc = json.loads(capsys.readouterr().out)
    seconds = parse_args(["triage", "--look-back", look_back]).look_back
    assert doc["source"]["look_back_s"] == seconds
    assert doc["source"]["look_back_from"] == sampling.LOOK_BACK_SINCE_START
    assert 60 < REAL_CAPTURED_AT - _independent(LEADER, "process_start_time_seconds") < 600
    row = next(r for r in doc["signals"]["etcd"] if r["instance"] == "minikube")
    seen = _independent(LEADER, CHANGES)
    assert row["leader_changes"] == (seen - 1 if since_start else seen)


# ------------------------------------------------ APF rejections since an apiserver started

APISERVER = "nri-k8s-1.35_kube-apiserver_metrics.prom"
"""kube-apiserver 1.35: no rejection counted; one is added below, as a flood leaves it."""
REJECTED = "apiserver_flowcontrol_rejected_requests_total"


def _apiserver(at: float, rejected: float) -> ClusterSnapshot:
    """One scrape at ``at`` of the real apiserver dump, with ``rejected`` rejections of
    the global-default level counted since its start, in a model of the look-back."""
    parsed = parse_exposition((FIXTURES / APISERVER).read_text(), FAMILIES[Component.APISERVER])
    assert parsed.errors == () and not any(s.name == REJECTED for s in parsed.samples)
    flood = Sample(
        REJECTED,
        (
            ("flow_schema", "global-default"),
            ("priority_level", "global-default"),
            ("reason", "queue-full"),
        ),
        rejected,
    )
    model = ClusterModel(ModelConfig(window_s=LOOK_BACK_S))
    target = Target(Component.APISERVER, "apiserver-0:6443")
    model.apply(MetricsScraped(at, target, (*parsed.samples, flood)))
    return model.observe()


def _rejected_per_s(snap: ClusterSnapshot) -> float | None:
    level = next(r for r in snap.apf.levels if r.priority_level == "global-default")
    return level.rejected_total_per_s.value


def test_rejections_an_apiserver_counted_since_it_started_within_the_look_back_count() -> None:
    """An APF flood that ended before the one-shot: its one scrape shows none in ktop's
    own seconds, but the apiserver counted them since it started, within the look-back."""
    started = _independent(APISERVER, "process_start_time_seconds")
    snap = _apiserver(started + 120.0, rejected=600.0)
    assert _rejected_per_s(snap) == pytest.approx(600.0 / 120.0)


def test_rejections_of_an_apiserver_started_before_the_look_back_need_two_scrapes() -> None:
    started = _independent(APISERVER, "process_start_time_seconds")
    snap = _apiserver(started + LOOK_BACK_S + 60.0, rejected=600.0)
    assert _rejected_per_s(snap) is None  # a lifetime count is not a rate over the look-back
