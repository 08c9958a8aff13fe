"""Skew across apiservers: the busiest instance against its peers, or its peers against the
idlest instance, whichever is larger.

Expected values are computed here by hand from the loads (the busiest load over the mean
of the others, or the mean of the others over the idlest load, each at least the
published floor), never through the function under test. Max / mean, the former
measure, can never pass 2 with two instances; busiest / mean of the others alone reads
2.0x when one of three has just restarted and its clients spread over the other two.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ktop.analysis.findings import Severity
from ktop.analysis.rules import apiservers
from ktop.model.area_apiservers import REQUEST_LOAD, WATCH_LOAD, skew
from ktop.model.events import LOAD_BALANCED
from ktop.model.limits import API_SKEW, SKEW_FLOOR
from ktop.model.snapshot_apiservers import ApiserverRow
from ktop.model.values import Val
from tests.functional.factories import AT, apiserver
from tests.unit.snapshots import healthy


def _rows(*watches: float | None, error_at: int | None = None) -> tuple[ApiserverRow, ...]:
    return tuple(
        replace(
            apiserver(i, rps=100, start=AT - 86400, error="refused" if i == error_at else ""),
            watches=Val.unknown("not scraped yet") if w is None else Val.of(w),
        )
        for i, w in enumerate(watches)
    )


@pytest.mark.parametrize(
    ("watches", "expected"),
    [
        # two instances: the busiest over the other
        ((640.0, 360.0), 640 / 360),  # the healthy lab's 1.28x max / mean: 1.78x, no alarm
        ((300.0, 100.0), 3.0),
        ((1000.0, 0.0), 1000 / SKEW_FLOOR),  # a rolling restart: one holds all
        ((4.0, 0.0), 1.0),  # both under the floor: noise, not skew
        ((0.0, 0.0), 1.0),  # no load at all
        # three: against the mean of the other two
        # three: the busiest against the mean of the other two, or that of the other two
        # against the idlest
        ((150.0, 150.0, 0.0), 150 / SKEW_FLOOR),  # one restarted, its clients spread over
        # the others: the idle one (busiest / others would read 150 / 75 = 2.0x)
        ((200.0, 100.0, 0.0), 200 / SKEW_FLOOR),  # ... or piled onto one: both read 4.0x
        ((100.0, 100.0, 130.0), 1.3),
        ((400.0, 400.0, 100.0), 4.0),  # the idlest is further: 400 / 100 against 400 / 250
        # many: one busy instance among nine even ones
        ((500.0, *([100.0] * 9)), 5.0),
        ((110.0, *([100.0] * 9)), 1.1),
    ],
)
def test_skew_is_the_furthest_instance_against_the_mean_of_the_others(
    watches: tuple[float, ...], expected: float
) -> None:
    assert skew(_rows(*watches), WATCH_LOAD.of).value == pytest.approx(expected)


def test_two_instances_reach_every_limit() -> None:
    """A split of 1 to 9 is critical with two instances (max / mean stops at 1.8x)."""
    assert API_SKEW.critical is not None and API_SKEW.warn is not None
    got = skew(_rows(900.0, 100.0), WATCH_LOAD.of).value
    assert got == pytest.approx(9.0)
    assert API_SKEW.grade(9.0) is Severity.CRITICAL
    assert API_SKEW.grade(640 / 360) is Severity.OK  # the healthy pair


def test_an_instance_without_data_or_answer_is_left_out() -> None:
    # just restarted: its rate needs a second scrape; with two instances nothing to compare
    one_known = skew(_rows(500.0, None), WATCH_LOAD.of)
    assert not one_known.known and one_known.reason == "needs two instances with data"
    # an instance that does not answer is not a peer with no load
    assert skew(_rows(500.0, 0.0, 500.0, error_at=1), WATCH_LOAD.of).value == pytest.approx(1.0)
    assert not skew(_rows(500.0), WATCH_LOAD.of).known


def test_the_findings_name_the_busiest_instance_and_its_peers() -> None:
    s = healthy()
    rows = (
        replace(s.apiservers.instances[0], requests_per_s=Val.of(900.0)),
        replace(s.apiservers.instances[1], requests_per_s=Val.of(100.0)),
    )
    api = replace(s.apiservers, instances=rows, request_skew=skew(rows, REQUEST_LOAD.of))
    found = [f for f in apiservers(replace(s, apiservers=api)) if f.code == "KT-API-001"]
    assert [f.severity for f in found] == [Severity.CRITICAL]
    assert found[0].title == "request skew 9.0x: apiserver-0 900 req/s, the others 100 on average"


def test_an_idle_instance_among_busy_ones_is_named() -> None:
    """The last instance back after a rolling restart: 20 watches against 300 and 320
    (its peers' mean 310, over the floor's 50: 6.2x, critical), where the busiest against
    its peers reads 320 / 160 = 2.0x.
    """
    rows = _rows(300.0, 320.0, 20.0)
    got = skew(rows, WATCH_LOAD.of)
    assert got.value == pytest.approx(310 / SKEW_FLOOR)
    s = healthy()
    api = replace(s.apiservers, instances=rows, watch_skew=got)
    found = [f for f in apiservers(replace(s, apiservers=api)) if f.code == "KT-API-002"]
    assert [f.severity for f in found] == [Severity.CRITICAL]
    assert found[0].title == (
        f"watch skew 6.2x: {rows[2].instance} 20 watches, the others 310 on average"
    )


@pytest.mark.parametrize(
    ("rates", "expected"),
    [
        # (requests/s, of them 429/s) per instance
        (((900.0, 800.0), (100.0, 0.0)), 1.0),  # a flood one instance rejects: 100 vs 100
        (((900.0, 0.0), (300.0, 200.0)), 9.0),  # the other rejects: 900 answered vs 100
        (((600.0, 100.0), (100.0, 0.0)), 5.0),  # answered 500 against 100
    ],
)
def test_request_skew_counts_the_requests_answered_and_not_the_429s(
    rates: tuple[tuple[float, float], ...], expected: float
) -> None:
    """A rejection costs an apiserver almost nothing: a flood that APF rejects on one
    instance (or one instance rejecting faster than another takes the same flood) is no
    imbalance of the load carried.
    """
    rows = tuple(
        replace(
            apiserver(i, rps=total, start=AT - 86400),
            requests_per_s=Val.of(total),
            throttled_per_s=Val.of(rejected),
        )
        for i, (total, rejected) in enumerate(rates)
    )
    assert skew(rows, REQUEST_LOAD.of).value == pytest.approx(expected)


def test_request_skew_without_the_429_rate_is_unknown() -> None:
    rows = tuple(
        replace(apiserver(i, rps=100, start=AT - 86400), throttled_per_s=Val.unknown("why"))
        for i in range(2)
    )
    got = skew(rows, REQUEST_LOAD.of)
    assert not got.known and got.reason == "needs two instances with data"


def test_behind_a_load_balancer_skew_is_unknown_and_says_why() -> None:
    """One row read through the kubeconfig's address: whichever instance answered is no
    peer of another, so the skew is unknown, with the load balancer named as the reason."""
    row = replace(apiserver(0, rps=100, start=AT - 86400), instance=LOAD_BALANCED)
    for load in (REQUEST_LOAD, WATCH_LOAD):
        got = skew((row,), load.of)
        assert got.value is None and "load balancer" in got.reason, got
    # one real instance alone: a different reason (the others may come)
    alone = skew(_rows(100.0), WATCH_LOAD.of)
    assert alone.value is None and "load balancer" not in alone.reason
