"""The diagnosis' headline, the first line of every screen: the cause each scenario
injects (declared by the scenario, not read from the renderer), since when and the
first direction, fitted to 80 columns and wider; no incident on a healthy cluster."""

from __future__ import annotations

import pytest

from ktop.analysis.trends import since_words
from ktop.hub import Hub
from ktop.sources.sim.scenarios import BY_NAME
from ktop.ui.render.triage import headline_bar
from tests.unit.played import played as play


def played(scenario: str) -> Hub:
    hub = play(scenario, nodes=300, zones=3, seed=4)
    hub.publish(force=True)
    return hub


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
    assert wide.startswith(f"✖ Probable cause: {cause} {path.title}")
    assert path.trend is not None and report.at is not None
    assert since_words(path.trend, report.at) in wide  # the time and how long ago
    assert f"first direction: {path.direction}" in wide


@pytest.mark.parametrize("scenario", ["etcd-slow-disk", "apf-saturation"])
@pytest.mark.parametrize("width", [80, 120, 200])
def test_at_any_width_the_cause_since_when_and_the_first_direction_show(
    scenario: str, width: int
) -> None:
    report = played(scenario).latest.triage
    cause = BY_NAME[scenario].cause
    path = next(p for p in report.paths if p.id == cause)
    assert path.trend is not None and report.at is not None
    line = headline_bar(report, width)
    assert line.cell_len <= width
    text = line.plain
    assert text.startswith(("✖ Probable cause: ", "✖ cause ")) and f" {cause}" in text
    assert since_words(path.trend, report.at) in text
    assert path.direction[:20] in text  # at least its start, when cut
