"""The diagnosis' headline, the first line of every screen: the cause each scenario
injects (declared by the scenario, not read from the renderer) by its title and place,
since when and the first direction, fitted to 80 columns and wider; no incident on a
healthy cluster; never "no incident" beside a critical finding."""

from __future__ import annotations

from collections import Counter

import pytest

from ktop.analysis.findings import Severity
from ktop.analysis.trends import since_words
from ktop.analysis.triage.paths import BY_ID
from ktop.hub import Hub, Published
from ktop.sources.sim.scenarios import BY_NAME, SCENARIOS
from ktop.sources.sim.simulator import Simulator
from ktop.ui.render.level import STYLE, Level
from ktop.ui.render.triage import headline_bar
from tests.unit.played import critical_without_cause
from tests.unit.played import played as play


def played(scenario: str) -> Hub:
    hub = play(scenario, nodes=300, zones=3, seed=4)
    hub.publish(force=True)
    return hub


def outage_zone(published: Published) -> str:
    """The zone most NotReady nodes are in, counted from the node list itself."""
    zones = Counter(n.zone for n in published.snapshot.nodes.not_ready_nodes)
    return zones.most_common(1)[0][0]


def slowest_member(published: Published) -> str:
    """The etcd member with the slowest backend commit, from the members' rows."""
    rows = published.snapshot.etcd.members
    return max(rows, key=lambda r: r.backend_commit_p99_s.value or 0.0).instance


@pytest.mark.parametrize("scenario", ["etcd-slow-disk", "zone-outage", "steady"])
def test_the_headline_names_the_injected_cause_since_when_and_where_to_look(
    scenario: str,
) -> None:
    published = played(scenario).latest
    report = published.triage
    cause = BY_NAME[scenario].cause
    wide = headline_bar(report, 400).plain
    if cause is None:
        assert wide.startswith("✓ No incident")
        return
    path = next(p for p in report.paths if p.id == cause)
    assert wide.startswith(f"✖ Probable cause: {cause} {BY_ID[cause].title}")
    assert path.trend is not None and report.at is not None
    assert since_words(path.trend, report.at) in wide  # the time and how long ago
    assert f"first direction: {path.direction}" in wide


@pytest.mark.parametrize(
    ("scenario", "place"),
    [("zone-outage", lambda p: f"zone {outage_zone(p)}"), ("etcd-slow-disk", slowest_member)],
)
@pytest.mark.parametrize("width", [80, 120, 400])
def test_at_every_width_the_cause_is_named_by_its_title_and_place(
    scenario: str, place: object, width: int
) -> None:
    published = played(scenario).latest
    report = published.triage
    cause = BY_NAME[scenario].cause
    assert cause is not None and callable(place)
    line = headline_bar(report, width).plain
    assert len(line) <= width
    assert BY_ID[cause].title in line
    assert place(published) in line


@pytest.mark.parametrize("scenario", ["etcd-slow-disk", "apf-saturation"])
@pytest.mark.parametrize("width", [80, 120, 200])
def test_since_when_shows_whole_before_the_first_direction_and_the_title_always(
    scenario: str, width: int
) -> None:
    report = played(scenario).latest.triage
    cause = BY_NAME[scenario].cause
    assert cause is not None
    path = next(p for p in report.paths if p.id == cause)
    assert path.trend is not None and report.at is not None
    line = headline_bar(report, width)
    assert line.cell_len <= width
    text = line.plain
    title = BY_ID[cause].title
    assert text.startswith("✖ ") and title[:20] in text  # at least its start, when cut
    since = since_words(path.trend, report.at)
    assert "since" not in text or since in text  # whole or not at all
    if since in text and "first:" in text:
        assert text.index(since) < text.index("first:")
    if width >= 200:
        assert since in text


def test_a_critical_finding_without_a_suspect_path_is_no_probable_cause_yet() -> None:
    """A critical Lease lag that no triage path explains: never "No incident"."""
    published = critical_without_cause()
    critical = [f for f in published.findings if f.severity is Severity.CRITICAL]
    assert critical and published.triage.cause is None  # the moment of the bug report
    for width in (80, 120, 400):
        line = headline_bar(published.triage, width, "f")
        assert line.plain.startswith("✖ No probable cause yet: 1 critical finding, press f")
        assert line.style == STYLE[Level.CRIT]
        assert line.cell_len <= width
    assert published.triage.incident  # `ktop triage` exits 1


SCAN_STEP_S = 5.0
"""How often (simulated seconds) the scan checks a frame after a scenario's injection."""


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_frame_of_every_scenario_the_headline_agrees_with_its_own_frame(
    scenario: str,
) -> None:
    """After the injection (the first phase's end), every few seconds: never "no
    incident" beside a critical finding; when a cause stands, its title and the place of
    its first suspect evidence that names one, at 80 columns and wide.
    """
    spec = SCENARIOS[scenario]
    injected = spec.phases[1].starts_at_s if len(spec.phases) > 1 else 0.0
    sim = Simulator(scenario, nodes=120, zones=3, seed=11)
    hub = Hub()
    hub.ingest(sim.start())
    t = 0.0
    while t < spec.duration_s:
        hub.ingest(sim.advance(SCAN_STEP_S))
        t += SCAN_STEP_S
        published = hub.publish(force=True)
        if published is None or t < injected:
            continue
        report = published.triage
        critical = any(f.severity is Severity.CRITICAL for f in published.findings)
        for width in (80, 400):
            line = headline_bar(report, width, "f")
            words = line.plain
            assert line.cell_len <= width, (t, words)
            if critical:
                assert "No incident" not in words, (t, words)
                assert line.style == STYLE[Level.CRIT] or words.startswith("✖"), (t, words)
            cause = report.cause
            if cause is None:
                continue
            assert BY_ID[cause.id].title[:20] in words, (t, words)
            places = {
                e.signal.partition("|")[2] for e in cause.evidence if e.suspect
            } & place_names(published)
            if places:  # its suspect evidence points at a place: one of them is named
                assert any(p in words for p in places), (t, words, places)


def place_names(published: Published) -> set[str]:
    """Every zone, etcd member, apiserver instance and priority level of the snapshot,
    as its own tables list them."""
    s = published.snapshot
    return (
        {z.zone for z in s.nodes.zones}
        | {m.instance for m in s.etcd.members}
        | {a.instance for a in s.apiservers.instances}
        | {lv.priority_level for lv in s.apf.levels}
    )
