"""APF top talkers: the window over request dumps (means, shares, ageing, failures), the
simulator's flood client named by the pane and by triage, and redaction of the names.
Expected numbers are computed here from the readings given, not by the fold."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest

from ktop.analysis.triage.diagnosis import headline
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.report import to_json
from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    ApfRequestsFailed,
    ApfRequestsRead,
    ApfTalker,
    Component,
    Target,
    TargetGone,
)
from ktop.model.snapshot_apf import TALKER_WINDOW_S
from ktop.model.state import export_state, import_state
from ktop.record.redact import Redactor
from ktop.sources.sim.simulator import Simulator
from ktop.sources.sim.talkers import STORM_USER
from ktop.ui.render.apf import panel, talker_line, talkers_table, top_talker


def talker(level: str, user: str, seats: int, waiting: int = 0) -> ApfTalker:
    return ApfTalker(level, "fs", user, user, 1 if seats else 0, seats, waiting, waiting, 0.0,
                     "list pods")  # fmt: skip


def read(at: float, inst: str, *talkers: ApfTalker, executing: bool = True) -> ApfRequestsRead:
    return ApfRequestsRead(at, inst, talkers, len(talkers), executing)


def model_with(*events: object) -> ClusterModel:
    m = ClusterModel()
    for e in events:
        m.apply(e)  # type: ignore[arg-type]
    return m


def test_means_over_readings_summed_over_instances_and_shares_of_the_level() -> None:
    # instance a: reporter holds 10 then 30 seats, bob 10 then nothing (absent = 0)
    # instance b: reporter holds 20 in its one reading
    events = [
        read(100, "a", talker("wl", "reporter", 10), talker("wl", "bob", 10)),
        read(115, "a", talker("wl", "reporter", 30)),
        read(110, "b", talker("wl", "reporter", 20, waiting=4)),
    ]
    m = model_with(*events)
    m.now = 115
    t = m.snapshot().apf.talkers
    rows = {r.client: r for r in t.rows}
    reporter = (10 + 30) / 2 + 20
    bob = 10 / 2
    assert rows["reporter"].seats == pytest.approx(reporter)
    assert rows["bob"].seats == pytest.approx(bob)
    assert rows["reporter"].seat_share == pytest.approx(reporter / (reporter + bob))
    assert rows["reporter"].wait_share == pytest.approx(1.0)  # the only one queued
    assert rows["bob"].wait_share == pytest.approx(0.0)
    assert rows["reporter"].instances == ("b", "a")  # b: 20+4, a: 20 on average
    assert t.rows[0].client == "reporter" and t.read == ("a", "b") and t.executing_listed
    # covered: a's span 15 s plus its one interval
    assert rows["reporter"].seat_s == pytest.approx(reporter * 30)


def test_readings_older_than_the_window_age_out() -> None:
    m = model_with(read(0, "a", talker("wl", "old", 5)), read(TALKER_WINDOW_S + 30, "a"))
    m.now = TALKER_WINDOW_S + 30
    assert [r.client for r in m.snapshot().apf.talkers.rows] == []


def test_before_1_28_seat_shares_are_unknown_not_zero() -> None:
    m = model_with(read(10, "a", talker("wl", "u", 0, waiting=3), executing=False))
    m.now = 10
    row = m.snapshot().apf.talkers.rows[0]
    assert row.seat_share is None and row.wait_share == 1.0
    assert row.share_words() == "100% of the queue"


def test_a_refused_dump_is_unknown_with_its_reason_and_the_evidence_unknown() -> None:
    why = "403 Forbidden: cannot get path /debug/api_priority_and_fairness/dump_requests"
    sim = Simulator("apf-saturation", nodes=200)
    m = ClusterModel()
    m.apply_all(e for e in sim.start() if not isinstance(e, ApfRequestsRead))
    later = [e for e in sim.advance(150) if not isinstance(e, ApfRequestsRead)]
    instances = {e.instance for e in later if isinstance(e, ApfRequestsFailed)}
    m.apply_all(later)
    for inst in ("apiserver-0:6443", "apiserver-1:6443", "apiserver-2:6443"):
        m.apply(ApfRequestsFailed(m.now, inst, why))
    snap = m.snapshot()
    assert snap.apf.talkers.rows == () and why in snap.apf.talkers.unknown_reason
    assert instances <= {i for i, _ in snap.apf.talkers.unread}
    ev_ = [e for p in triage(snap).paths for e in p.evidence if e.id == "apf.top_talker"]
    assert ev_ and all(e.status.value == "unknown" and why in e.detail for e in ev_)
    table = talkers_table(snap.apf.talkers)
    assert table.rows == () and why in table.empty


def test_a_gone_instance_is_forgotten() -> None:
    m = model_with(read(10, "a", talker("wl", "u", 3)))
    m.apply(TargetGone(11, Target(Component.APISERVER, "a"), "left"))
    m.now = 11
    assert m.snapshot().apf.talkers.rows == ()


@pytest.fixture(scope="module")
def saturated() -> ClusterModel:
    sim = Simulator("apf-saturation", nodes=300)
    m = ClusterModel()
    m.apply_all(sim.start())
    for _ in range(16):  # into the rejections phase (100 s on)
        m.apply_all(sim.advance(10))
    return m


def test_the_flood_client_is_named_in_the_pane_and_the_headline(saturated: ClusterModel) -> None:
    snap = saturated.snapshot()
    top = top_talker(snap.apf)
    assert top is not None
    level, client, _ = top
    assert level.priority_level == "workload-low" and client.client == STORM_USER
    assert client.load_share >= 0.5 and len(client.instances) == 3
    lines = [x.plain for x in panel(snap.apf, None, 12, 100).lines]
    assert any(STORM_USER in x and "workload-low" in x for x in lines)
    # narrow: the sentence gives way to the short name, never cut mid-name
    short = talker_line(client, 38)
    assert len(short) <= 38 and short.endswith("sa:batch:reporter")
    report = triage(snap)
    assert "top talker: workload-low: " in headline(report).text()
    assert STORM_USER in headline(report).text()
    doc = to_json(report, snap, source={"kind": "demo"})
    clients = doc["top_talkers"]["clients"]
    assert clients[0]["client"] == STORM_USER and clients[0]["priority_level"] == "workload-low"
    assert msgpack.unpackb(msgpack.packb(doc)) == doc  # plain data


def test_a_healthy_cluster_names_no_talker() -> None:
    sim = Simulator("steady", nodes=300)
    m = ClusterModel()
    m.apply_all(sim.start())
    m.apply_all(sim.advance(120))
    snap = m.snapshot()
    assert top_talker(snap.apf) is None
    assert "top talker" not in headline(triage(snap)).text()


def test_keyframes_keep_the_window(saturated: ClusterModel) -> None:
    state = msgpack.unpackb(msgpack.packb(export_state(saturated)), strict_map_key=False)
    copy = import_state(state)
    assert replace(copy.snapshot(), seq=0).apf == replace(saturated.snapshot(), seq=0).apf


def test_redaction_keeps_the_kind_of_each_user_and_hides_the_names() -> None:
    r = Redactor()
    e = read(
        1.0,
        "10.0.0.7:6443",
        talker("wl", "system:serviceaccount:payments:reporter", 3),
        talker("gd", "alice@corp.example", 1),
        talker("sys", "system:node:worker-7", 1),
        talker("wh", "system:kube-controller-manager", 1),
    )
    out = r.event(e)
    assert isinstance(out, ApfRequestsRead)
    users = [t.user for t in out.talkers]
    assert users[0].startswith("system:serviceaccount:ns-") and "payments" not in users[0]
    assert users[1].startswith("user-") and users[2].startswith("system:node:node-")
    assert users[3] == "system:kube-controller-manager"  # a built-in identity, kept
    assert [t.distinguisher for t in out.talkers] == users  # the same stand-in
    assert [t.what for t in out.talkers] == ["list pods"] * 4 and "10.0.0.7" not in str(out)
