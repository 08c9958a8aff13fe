"""The lab's apiserver-skew scenario sizes its load to pass the critical skew limit.

The expected counts are worked out by hand from the published limit (5x) and floor (50).
"""

from __future__ import annotations

from ktop.lab.inject import DURATION_SCENARIOS
from ktop.lab.scenario_skew import MAX_WATCHES, SKEW_AIM, registered_watches, watches_to_open
from ktop.model.limits import API_SKEW, SKEW_FLOOR

METRICS = """\
# HELP apiserver_longrunning_requests [STABLE] Gauge of all active long-running apiserver requests
# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 41
apiserver_longrunning_requests{component="apiserver",group="",resource="nodes",scope="cluster",subresource="",verb="WATCH",version="v1"} 19
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="log",verb="GET",version="v1"} 3
apiserver_request_total{code="200",verb="WATCH"} 900
"""  # noqa: E501


def test_the_watches_an_apiserver_holds_are_its_watch_gauges_summed() -> None:
    assert registered_watches(METRICS) == 41 + 19
    assert registered_watches("") == 0


def test_enough_watches_to_pass_twice_the_critical_limit() -> None:
    assert (API_SKEW.critical, SKEW_FLOOR, SKEW_AIM) == (5.0, 50.0, 2.0)
    # the healthy lab: 180 held, the peer 100: 10 x 100 - 180
    assert watches_to_open(180.0, [100.0]) == 820
    # a peer at rest under the floor counts as the floor: 10 x 50 - 0
    assert watches_to_open(0.0, [0.0]) == 500
    # several peers: against their mean, (100 + 300) / 2 = 200 -> 2000 - 500
    assert watches_to_open(500.0, [100.0, 300.0]) == 1500
    # already skewed enough: nothing to open; never past the cap
    assert watches_to_open(5000.0, [100.0]) == 0
    assert watches_to_open(0.0, [10_000.0]) == MAX_WATCHES


def test_the_skew_scenario_lasts_for_a_duration() -> None:
    assert "apiserver-skew" in DURATION_SCENARIOS
