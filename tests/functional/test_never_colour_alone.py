"""Never colour alone: without colour, every warn, bad or unknown reading says so in text.

The app runs in the monochrome theme and with ``NO_COLOR``; the overview is read
as plain text from the screen, and every checked cell's state is computed here
from the finding catalogue's thresholds and the snapshot's numbers, not by the
renderer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

from ktop.analysis import catalogue
from ktop.analysis.catalogue import Threshold
from ktop.analysis.findings import Severity
from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.values import Val
from ktop.ui.app import KtopApp
from ktop.ui.display import Display
from ktop.ui.screens.overview import OverviewScreen
from tests.functional.factories import StaticHub, busy_snapshot
from tests.functional.scenarios import scenario_hub
from tests.functional.screen import screen_text

MARK = {Severity.CRITICAL: "✖", Severity.WARNING: "▲", Severity.UNKNOWN: "?"}
"""What a reader sees in front of a reading of each severity (the legend in the help)."""
TOKEN = re.compile(r"[✖▲]?[^\s✖▲]+|[✖▲]")
"""A cell: a symbol stuck to its value (``▲612ms``), or a lone symbol (``✖ zone-a``)."""


def grade(t: Threshold, v: Val) -> Severity:
    """The state the catalogue gives a reading (unknown when unread)."""
    return t.grade_val(v)


def panel_rows(app: KtopApp, area: Area) -> tuple[list[str], list[list[str]]]:
    """An overview panel's header and rows as tokens, read from the screen inside its border."""
    screen = app.screen
    assert isinstance(screen, OverviewScreen)
    r = screen.panel(area).region
    lines = screen_text(app).splitlines()[r.y + 1 : r.bottom - 1]
    inner = [ln[r.x + 1 : r.right - 1] for ln in lines]
    header = inner[0].replace("lag max", "lag-max").replace("lag p50", "lag-p50").split()
    rows = [TOKEN.findall(ln) for ln in inner[1:] if ln.strip()]
    return header, rows


def cell(header: list[str], row: list[str], column: str) -> str | None:
    """The token under ``column`` (rows and header have one token per column)."""
    if column not in header or len(row) != len(header):
        return None
    return row[header.index(column)]


Check = tuple[str, str, Severity]
"""(where, the token on screen, the state the catalogue gives it)."""


def etcd_checks(app: KtopApp, snap: ClusterSnapshot) -> Iterator[Check]:
    header, rows = panel_rows(app, Area.ETCD)
    for m in snap.etcd.members:
        name = m.instance.split(":")[0]
        row = next(r for r in rows if r[0].lstrip("✖▲?").rstrip("*") == name)
        for column, threshold, v in (
            ("fsync", catalogue.ETCD_FSYNC_P99, m.wal_fsync_p99_s),
            ("commit", catalogue.ETCD_COMMIT_P99, m.backend_commit_p99_s),
            ("db/quota", catalogue.ETCD_QUOTA, m.db_quota_ratio),
        ):
            token = cell(header, row, column)
            assert token is not None, (header, row)
            yield f"etcd {name} {column}", token, grade(threshold, v)


def apf_checks(app: KtopApp, snap: ClusterSnapshot) -> Iterator[Check]:
    header, rows = panel_rows(app, Area.APF)
    for row in rows:
        name = row[0].lstrip("✖▲?").rstrip("…")
        level = next((r for r in snap.apf.levels if r.priority_level.startswith(name)), None)
        if level is None:  # "+5 more"
            continue
        used, limit = level.seats_in_use.value, level.seats_limit.value
        seats = Val.of(used / limit) if used is not None and limit else Val.unknown("?")
        for column, threshold, v in (
            ("p99", catalogue.APF_WAIT_P99, level.wait_p99_s),
            ("rej", catalogue.APF_REJECTIONS, level.rejected_total_per_s),
            ("seats", catalogue.APF_SEATS, seats),
        ):
            token = cell(header, row, column)
            if token is not None and "/" not in token:  # wide panels show seats as used/limit
                yield f"apf {name} {column}", token, grade(threshold, v)


def apiserver_checks(app: KtopApp, snap: ClusterSnapshot) -> Iterator[Check]:
    header, rows = panel_rows(app, Area.APISERVERS)
    for row, inst in zip(rows, snap.apiservers.instances, strict=False):
        if row[0].startswith("+"):  # "+2 more": the rows after it are not shown
            break
        start = inst.start_time.value
        up = Val.of(snap.at - start) if start is not None else inst.start_time
        token = cell(header, row, "up")
        assert token is not None, (header, row)
        yield f"apiserver {inst.instance} up", token, grade(catalogue.API_UPTIME, up)
        token = cell(header, row, "429")
        if token is not None:
            throttled = grade(catalogue.API_THROTTLED, inst.throttled_per_s)
            yield f"apiserver {inst.instance} 429", token, throttled


def nodes_checks(app: KtopApp, snap: ClusterSnapshot) -> Iterator[Check]:
    header, rows = panel_rows(app, Area.NODES)
    for row, zone in zip(rows, snap.nodes.zones, strict=False):
        merged = [row[0] + row[1], *row[2:]]  # "✓ zone-a" is one column
        token = cell(header, merged, "lag-max")
        assert token is not None, (header, merged)
        yield (
            f"zone {zone.zone} lag",
            token,
            grade(catalogue.NODE_LEASE_LAG_P99, zone.lease_lag_max_s),
        )


CHECKS: tuple[Callable[[KtopApp, ClusterSnapshot], Iterator[Check]], ...] = (
    etcd_checks,
    apf_checks,
    apiserver_checks,
    nodes_checks,
)


def hub_for(name: str) -> StaticHub:
    """A hub at the moment a scenario (or the hand-made incident) shows its story."""
    if name == "busy":
        return StaticHub(busy_snapshot())
    published = scenario_hub(name).latest
    return StaticHub(published.snapshot, published.findings)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@pytest.mark.parametrize("scenario", ["busy", "etcd-slow-disk", "apf-saturation", "apiserver-skew"])
@pytest.mark.parametrize("how", ["NO_COLOR", "monochrome"])
async def test_every_warn_bad_and_unknown_cell_reads_without_colour(
    how: str, scenario: str, size: tuple[int, int]
) -> None:
    hub = hub_for(scenario)
    snap = hub.latest.snapshot
    if how == "NO_COLOR":
        app = KtopApp(hub, display=Display(no_color=True), user_themes=False)
    else:
        app = KtopApp(hub, theme="monochrome", user_themes=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert app.theme == "monochrome"
        checks = [c for check in CHECKS for c in check(app, snap)]
    marked = [c for c in checks if c[2] in MARK]
    assert marked, "the scenario must have warn, bad or unknown readings (or this test is void)"
    for where, token, state in checks:
        if state in MARK:
            assert token.startswith(MARK[state]), (where, token, state)
        else:
            assert not token.startswith(tuple(MARK.values())), (where, token, state)
