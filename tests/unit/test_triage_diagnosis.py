"""The differential diagnosis: one probable cause, the consequences it explains,
independent suspects, then unknown and clear paths.

The simulator test drives every scenario with seeds and sizes other than the shipped
recordings' (500 nodes, 3 zones, seed 1) and expects the cause each scenario declares
it injects (``Scenario.cause`` in ``ktop/sources/sim/scenarios.py``) to rank first.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ktop.analysis.trends import Direction, Trend
from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.diagnosis import ONSET_SLACK_S, diagnose
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.paths import BY_ID, PATHS
from ktop.analysis.triage.report import error_json, to_json
from ktop.analysis.triage.types import (
    Evidence,
    PathResult,
    Role,
    Status,
    TriageReport,
    Verdict,
)
from ktop.commands.triage import EXIT_CLEAR, EXIT_SUSPECT, render
from ktop.hub import Published
from ktop.model.snapshot import ClusterSnapshot
from ktop.sampling import Sampled
from ktop.sources.sim.scenarios import ALL
from ktop.ui.render.triage_text import to_markdown, to_text
from tests.unit.played import played

SIZES = ((240, 3, 2), (900, 4, 5))
"""(nodes, zones, seed): neither the shipped recordings' 500 nodes, 3 zones, seed 1."""
T0 = 1_767_225_600.0


def _run(scenario: str, nodes: int, zones: int, seed: int) -> ClusterSnapshot:
    """The scenario played to the end of its story."""
    return played(scenario, nodes, zones, seed).latest.snapshot


SIMULATED = [s for s in ALL if s.sim is not None]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}n{s[1]}z-seed{s[2]}")
@pytest.mark.parametrize("scenario", SIMULATED, ids=lambda s: s.name)
def test_every_scenario_ranks_its_injected_cause_first(
    scenario: object, size: tuple[int, int, int]
) -> None:
    from ktop.sources.sim.scenarios import Scenario

    assert isinstance(scenario, Scenario)
    snap = _run(scenario.name, *size)
    baseline = baseline_source(snap, HistoryKind.RECORDING)
    report = triage(snap, baseline)
    published = Published(snap, (), HistoryKind.RECORDING)
    text, code = render(Sampled(published, {"kind": "test"}), "text")
    doc = to_json(report, snap, source={"kind": "test"})
    if scenario.cause is None:
        assert report.cause is None and report.suspects == ()
        assert code == EXIT_CLEAR
        assert doc["cause"] is None
        assert text.startswith("No incident")
        return
    assert report.cause is not None, to_text(report)
    assert report.cause.id == scenario.cause, to_text(report)
    assert report.paths[0] is report.cause
    assert code == EXIT_SUSPECT
    assert doc["cause"]["id"] == scenario.cause
    assert text.startswith(f"Probable cause: {scenario.cause} ")
    # every other suspect is either explained by a suspect or a cause of its own
    for p in report.suspects[1:]:
        assert p.role in (Role.CONSEQUENCE, Role.INDEPENDENT)
        if p.role is Role.CONSEQUENCE:
            assert p.explained_by and set(p.explained_by) <= {q.id for q in report.suspects}


def test_every_scenario_names_a_triage_path_as_its_cause() -> None:
    for s in ALL:
        assert s.cause is None or s.cause in BY_ID, s.name
    assert [s.name for s in ALL if s.cause is None] == ["steady"]


def test_explanations_name_other_paths_and_never_go_round_in_a_circle() -> None:
    edges = {p.id: p.explained_ids for p in PATHS}
    for p in PATHS:
        assert p.explained_ids <= set(BY_ID) - {p.id}, p.id
        assert all(x.why for x in p.explains)

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(
            n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start]
        )

    assert not [p.id for p in PATHS if reaches(p.id, p.id)]


# ------------------------------------------------------------------ diagnose alone


def _result(pid: str, status: Status, onset: float | None = None) -> PathResult:
    """A path whose one first-line reading has ``status`` and, with ``onset``, has been
    beyond its threshold since then.
    """
    trend = None if onset is None else Trend(onset, False, Direction.STEADY, 0.0)
    bad = status in (Status.BAD, Status.WARN)
    e = Evidence(
        f"{pid}.reading",
        "a reading",
        status,
        1.0,
        "count",
        "detail",
        True,
        None,
        suspect=bad,
        signal="x" if onset is not None else "",
        trend=trend,
    )
    verdict = (
        Verdict.SUSPECT if bad else Verdict.UNKNOWN if status is Status.UNKNOWN else Verdict.CLEAR
    )
    return PathResult(pid, BY_ID[pid].title, verdict, (e,), f"{pid} conclusion", "go")


def _roles(paths: tuple[PathResult, ...]) -> list[tuple[str, Role | None, tuple[str, ...]]]:
    return [(p.id, p.role, p.explained_by) for p in paths]


def test_a_consequence_says_what_explains_it_and_ranks_below_it() -> None:
    # write latency is listed first and began first, yet etcd's slow commit explains it
    paths = diagnose(
        [
            _result("API-WRITE", Status.BAD, T0),
            _result("ETCD", Status.WARN, T0 + ONSET_SLACK_S / 2),
            _result("P4", Status.OK),
            _result("API-CPU", Status.UNKNOWN),
        ]
    )
    assert _roles(paths) == [
        ("ETCD", Role.CAUSE, ()),
        ("API-WRITE", Role.CONSEQUENCE, ("ETCD",)),
        ("API-CPU", Role.UNKNOWN, ()),
        ("P4", Role.CLEAR, ()),
    ]
    report = TriageReport(paths, (), "none", T0 + 600)
    text = to_text(report)
    assert text.splitlines()[0].startswith("Probable cause: ETCD etcd health")
    line = next(x for x in text.splitlines() if " API-WRITE " in x)
    assert "suspect" not in line and "explained" in line
    assert "explained by ETCD: every write waits for etcd's commit" in text
    md = to_markdown(report)
    assert md.splitlines()[0].startswith("**Probable cause: ETCD")
    assert "| API-WRITE Write latency is high | explained |" in md


def test_independent_causes_rank_by_onset_then_strength() -> None:
    skew, zone = _result("SKEW", Status.WARN, T0 + 300), _result("P4", Status.BAD, T0)
    assert _roles(diagnose([skew, zone])) == [
        ("P4", Role.CAUSE, ()),
        ("SKEW", Role.INDEPENDENT, ()),
    ]
    later_zone = replace(
        zone,
        evidence=(replace(zone.evidence[0], trend=Trend(T0 + 900, False, Direction.STEADY, 0.0)),),
    )
    assert [p.id for p in diagnose([later_zone, skew])] == ["SKEW", "P4"]
    # without a history (a bundle): the stronger evidence first
    assert [p.id for p in diagnose([_result("SKEW", Status.WARN), _result("P4", Status.BAD)])] == [
        "P4",
        "SKEW",
    ]


def test_a_cause_that_began_long_after_the_symptom_does_not_explain_it() -> None:
    late = T0 + ONSET_SLACK_S + 120
    paths = diagnose([_result("ETCD", Status.BAD, late), _result("API-WRITE", Status.BAD, T0)])
    assert _roles(paths) == [("API-WRITE", Role.CAUSE, ()), ("ETCD", Role.INDEPENDENT, ())]


def test_consequences_follow_the_cause_that_explains_them_in_causal_order() -> None:
    # the relist storm explains the 429s, which explain the retries (P5); P5 is also
    # explained by the storm itself
    paths = diagnose(
        [
            _result("P5", Status.BAD, T0),
            _result("API-429", Status.BAD, T0 + 10),
            _result("API-RELIST", Status.WARN, T0 + 20),
        ]
    )
    assert _roles(paths) == [
        ("API-RELIST", Role.CAUSE, ()),
        ("API-429", Role.CONSEQUENCE, ("API-RELIST",)),
        ("P5", Role.CONSEQUENCE, ("API-RELIST", "API-429")),
    ]


def test_no_suspect_is_no_incident() -> None:
    paths = diagnose([_result("ETCD", Status.OK), _result("P4", Status.UNKNOWN)])
    report = TriageReport(paths, (), "none", T0)
    assert report.cause is None and not report.incident
    assert to_text(report).startswith("No incident: no triage path is suspect (1 paths unknown)")


def test_the_json_names_the_cause_each_consequence_s_explainer_and_onsets() -> None:
    paths = diagnose(
        [
            _result("API-WRITE", Status.BAD, T0 + 5),
            _result("ETCD", Status.BAD, T0),
            _result("P4", Status.WARN),
        ]
    )
    report = TriageReport(paths, (), "none", T0 + 600)
    from tests.unit.snapshots import healthy

    doc = to_json(report, healthy(), source={"kind": "test"})
    assert (doc["version"], doc["minor_version"]) == (1, 12)
    assert doc["cause"]["id"] == "ETCD" and doc["cause"]["onset"] == T0
    assert doc["cause"]["explains"] == ["API-WRITE"]
    assert doc["independent"] == ["P4"]
    assert doc["headline"].startswith("Probable cause: ETCD")
    by_id = {p["id"]: p for p in doc["paths"]}
    assert [p["id"] for p in doc["paths"]] == ["ETCD", "API-WRITE", "P4"]
    assert by_id["API-WRITE"]["explained_by"] == ["ETCD"]
    assert by_id["API-WRITE"]["role"] == "consequence"
    assert by_id["API-WRITE"]["onset"] == T0 + 5
    assert by_id["P4"]["role"] == "independent" and by_id["P4"]["onset"] is None
    err = error_json("nope", {})
    assert err["cause"] is None and err["independent"] == []
    assert err["minor_version"] == doc["minor_version"]
