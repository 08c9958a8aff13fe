"""etcd alarms (``etcd.alarms``, KT-ETCD-009) from real etcd output, and a member's
recent restart (``etcd.recent_restart``) from its own start time.

The fixtures are a real etcd v3.6.16 member filled past its quota until it raised NOSPACE
(``tests/fixtures/etcdctl-3.6.16_etcd_info/nospace/``: its ``/metrics`` and etcdctl's
``-w json`` outputs, read at the same moment), a healthy 3.6 member and a 3.4 member. The
expected counts come from prometheus_client's parser and from the JSON read here, not
from ktop's parsers.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.analysis.rules import evaluate
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.types import Evidence, Status, Verdict
from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Target
from ktop.model.exposition import parse_exposition
from ktop.model.scrape_targets import Sample
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import NOT_READ, EtcdMemberRow
from ktop.model.values import Val
from ktop.model.wanted import FAMILIES
from ktop.sources.bundle.etcd_info import read_etcd_info
from ktop.sources.bundle.parts import BundleRead
from tests.functional.factories import AT, member
from tests.unit.snapshots import healthy

FIXTURES = Path(__file__).parents[1] / "fixtures"
NOSPACE = FIXTURES / "etcdctl-3.6.16_etcd_info" / "nospace"
HEALTHY_INFO = FIXTURES / "etcdctl-3.6.16_etcd_info"
TARGET = Target(Component.ETCD, "etcd-0:2379")


def _standing(text: str) -> dict[str, float]:
    """Alarm type -> count of ``etcd_debugging_server_alarms`` above 0, by an independent parser."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "etcd_debugging_server_alarms" and s.value > 0:
                kind = s.labels["alarm_type"]
                out[kind] = out.get(kind, 0.0) + s.value
    return out


def _snapshot(text: str) -> ClusterSnapshot:
    model = ClusterModel()
    parsed = parse_exposition(text, FAMILIES[Component.ETCD])
    model.apply_all([MetricsScraped(100.0, TARGET, parsed.samples)])
    return model.snapshot()


def _member(text: str) -> EtcdMemberRow:
    (member,) = _snapshot(text).etcd.members
    return member


def _scraped(name: str, samples: tuple[Sample, ...]) -> EtcdMemberRow:
    """The member row of one scrape made of a bundle's samples."""
    model = ClusterModel()
    model.apply_all([MetricsScraped(100.0, Target(Component.ETCD, name), samples)])
    (row,) = model.snapshot().etcd.members
    return row


def test_a_real_nospace_alarm_is_read_and_is_critical() -> None:
    text = (NOSPACE / "metrics.prom").read_text()
    standing = _standing(text)
    assert standing == {"NOSPACE": 1.0}
    member = _member(text)
    assert member.alarms.value == sum(standing.values())
    assert member.alarm_types == tuple(sorted(standing))
    findings = [f for f in evaluate(_snapshot(text)) if f.code == "KT-ETCD-009"]
    assert [f.severity.name for f in findings] == ["CRITICAL"]
    assert "NOSPACE" in findings[0].title and "etcd-0:2379" in findings[0].title


def test_a_3_6_member_with_no_alarm_series_has_none_and_a_3_4_member_is_unknown() -> None:
    healthy = (FIXTURES / "nri-k8s-1.35_etcd_metrics.prom").read_text()
    assert not _standing(healthy) and 'server_version="3.6' in healthy
    assert _member(healthy).alarms.value == 0.0
    old = (FIXTURES / "qubership_etcd-3.4.3_follower_metrics.prom").read_text()
    assert "etcd_debugging_server_alarms" not in old
    member = _member(old)
    assert not member.alarms.known
    assert "etcd 3.6" in member.alarms.reason
    assert not [f for f in evaluate(_snapshot(old)) if f.code == "KT-ETCD-009"]


def test_an_alarm_disarmed_after_a_restart_is_not_counted() -> None:
    """etcd decrements the gauge when it applies a disarm; after a restart that takes it
    below 0 (it was never raised in this process): no alarm stands."""
    text = (
        (NOSPACE / "metrics.prom")
        .read_text()
        .replace(
            'etcd_debugging_server_alarms{alarm_type="NOSPACE",server_id="2e1259d415f2a040"} 1',
            'etcd_debugging_server_alarms{alarm_type="NOSPACE",server_id="2e1259d415f2a040"} -1',
        )
    )
    assert _standing(text) == {}
    member = _member(text)
    assert member.alarms.value == 0.0 and member.alarm_types == ()


def _alarm_list(root: Path) -> dict[str, int]:
    """Alarm type -> members raising it, from etcdctl's JSON (AlarmType: 1 NOSPACE, 2 CORRUPT)."""
    names = {1: "NOSPACE", 2: "CORRUPT"}
    listed = json.loads((root / "alarm_list.json").read_text())
    out: dict[str, int] = {}
    for a in listed.get("alarms", []):
        out[names[a["alarm"]]] = out.get(names[a["alarm"]], 0) + 1
    return out


def _etcd_info(tmp_path: Path, source: Path, *, drop: str = "") -> Path:
    root = tmp_path / "mg"
    dest = root / "etcd_info"
    dest.mkdir(parents=True)
    for f in source.glob("*.json"):
        if f.name != drop:
            shutil.copy(f, dest / f.name)
    return root


def test_a_must_gathers_alarm_list_is_read_and_its_member_is_not_lost(tmp_path: Path) -> None:
    """etcdctl endpoint health fails a member while an alarm stands ("Active Alarm(s):
    NOSPACE"): the member answered, so it is read, and the alarm is the finding."""
    health = json.loads((NOSPACE / "endpoint_health.json").read_text())
    assert health[0]["health"] is False and "NOSPACE" in health[0]["error"]
    expected = _alarm_list(NOSPACE)
    assert expected == {"NOSPACE": 1}
    out = BundleRead()
    info = read_etcd_info(_etcd_info(tmp_path, NOSPACE), out)
    assert not info.failed and not out.errors and not out.missing
    (name,) = info.samples
    assert name == "default"
    alarms = {
        dict(s.labels)["alarm_type"]: s.value
        for s in info.samples[name]
        if s.name == "etcd_debugging_server_alarms"
    }
    assert alarms == {"NOSPACE": 1.0, "CORRUPT": 0.0}
    member = _scraped(name, info.samples[name])
    assert member.alarms.value == sum(expected.values())
    assert member.alarm_types == ("NOSPACE",)


def test_a_healthy_alarm_list_is_zero_and_a_missing_one_is_unknown(tmp_path: Path) -> None:
    assert _alarm_list(HEALTHY_INFO) == {}
    info = read_etcd_info(_etcd_info(tmp_path / "a", HEALTHY_INFO), BundleRead())
    assert len(info.samples) == 3
    assert all(_scraped(n, s).alarms.value == 0.0 for n, s in info.samples.items())
    out = BundleRead()
    without = read_etcd_info(_etcd_info(tmp_path / "b", HEALTHY_INFO, drop="alarm_list.json"), out)
    assert "etcd_info/alarm_list.json" in out.missing
    for n, samples in without.samples.items():
        assert not _scraped(n, samples).alarms.known, "an alarm list not read is not 'no alarm'"


@pytest.mark.parametrize(
    "listed",
    [
        {"alarms": [{"memberID": 1, "alarm": 7}]},
        {"alarms": ["NOSPACE"]},
        {"alarms": 5},
        {"alarms": {"alarm": 1}},
        {"alarms": [{"memberID": 1, "alarm": [1]}]},
        {"alarms": [{"memberID": 1, "alarm": True}]},
    ],
    ids=["unknown-type", "not-an-object", "a-number", "an-object", "a-list-type", "a-flag"],
)
def test_an_alarm_ktop_does_not_know_is_reported_not_dropped_silently(
    tmp_path: Path, listed: dict[str, object]
) -> None:
    root = _etcd_info(tmp_path, NOSPACE)
    (root / "etcd_info" / "alarm_list.json").write_text(json.dumps(listed))
    out = BundleRead()
    read_etcd_info(root, out)
    assert [e.file for e in out.errors] == ["etcd_info/alarm_list.json"]


def test_a_standing_alarm_makes_etcd_the_suspect_path() -> None:
    """The NOSPACE member's real metrics: the ETCD path is suspect on its alarm evidence,
    naming the member, while the same member's metrics without the alarm leave it clear of
    alarms (the database near its quota is its own evidence)."""
    text = (NOSPACE / "metrics.prom").read_text()
    report = triage(_snapshot(text))
    etcd = next(p for p in report.paths if p.id == "ETCD")
    alarms = next(e for e in etcd.evidence if e.id == "etcd.alarms")
    assert (alarms.status, alarms.value) == (Status.BAD, 1.0)
    assert "etcd-0:2379" in alarms.detail
    assert etcd.verdict is Verdict.SUSPECT
    quiet = "\n".join(
        line for line in text.splitlines() if not line.startswith("etcd_debugging_server_alarms")
    )
    calm = next(p for p in triage(_snapshot(quiet)).paths if p.id == "ETCD")
    assert next(e for e in calm.evidence if e.id == "etcd.alarms").status is Status.OK


def _restart(*starts: float | None) -> Evidence:
    rows = tuple(
        replace(member(f"etcd-{i}", leader=i == 0), start_time=Val.of(t) if t else NOT_READ)
        for i, t in enumerate(starts)
    )
    s = healthy()
    snap = replace(s, etcd=replace(s.etcd, members=rows))
    etcd = next(p for p in triage(snap).paths if p.id == "ETCD")
    return next(e for e in etcd.evidence if e.id == "etcd.recent_restart")


def test_a_member_restarted_within_the_look_back_is_a_warning_with_its_start_as_onset() -> None:
    """A one-shot run after a member was killed and restarted sees the restart from the
    member's own start time, with no history: the latest start, and the first restart in
    the look-back as the onset."""
    window = healthy().window_s
    e = _restart(AT - 10 * window, AT - 40, AT - 25)
    assert (e.status, e.value) == (Status.WARN, 25.0)
    assert "etcd-2 started at" in e.detail and "2 members restarted" in e.detail
    assert e.trend is not None and e.trend.since == AT - 40
    calm = _restart(AT - 10 * window, AT - 3 * window, AT - 2 * window)
    assert calm.status is Status.OK and calm.value == 2 * window
    assert _restart(None, None, None).status is Status.UNKNOWN


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(alarms=JSON)
def test_no_alarm_list_crashes_the_reader(alarms: object) -> None:
    """Any JSON where the alarms go is read or named as an error, never a crash."""
    with tempfile.TemporaryDirectory() as tmp:
        root = _etcd_info(Path(tmp), NOSPACE)
        listed = {"header": {}, "alarms": alarms}
        (root / "etcd_info" / "alarm_list.json").write_text(json.dumps(listed))
        out = BundleRead()
        info = read_etcd_info(root, out)
        assert set(info.samples) == {"default"}
