"""The PromQL of the readings that Prometheus can compute: the same numbers as ktop's
own windowed math (``ktop/model/series_window.py``). ``{job}`` and ``{w}`` are placeholders
(the component's job regular expression, the window in seconds).
"""

from __future__ import annotations

from ktop.model.limits import SKEW_FLOOR
from ktop.model.reading import QUANTILE

INST = "instance"
"""The label that tells a component's instances apart (the subject of per-instance
readings)."""
PL = "priority_level"
"""The label that names an APF priority level (the subject of per-level readings)."""


def rate_by(expr: str, by: str) -> str:
    """The rate of ``expr`` over the window, summed by ``by``."""
    return f"sum by ({by}) (rate({expr}[{{w}}s]))"


def p99_by(family: str, by: str, extra: str = "") -> str:
    """The windowed p99 of histogram ``family`` by ``by`` (Prometheus' own math)."""
    sel = f'{family}_bucket{{{{job=~"{{job}}"{extra}}}}}'
    return f"histogram_quantile({QUANTILE}, sum by ({by}, le) (rate({sel}[{{w}}s])))"


def select(name: str, extra: str = "") -> str:
    """``name`` of the component's job, with ``extra`` matchers."""
    return f'{name}{{{{job=~"{{job}}"{extra}}}}}'


WATCHES = "sum by (instance) (" + select("apiserver_longrunning_requests", ',verb="WATCH"') + ")"
REQUESTS_BY_INSTANCE = (
    "sum by (instance) (rate(" + select("apiserver_request_total", ',code!="429"') + "[{w}s]))"
)
"""Requests answered per second and instance, 429s aside (the model's
:func:`~ktop.model.area_apiservers.served_per_s`)."""


def peer_skew(by_instance: str) -> str:
    """The busiest instance's load over the mean of the others', or the mean of the others'
    over the idlest instance's, whichever is larger, each load at least
    :data:`~ktop.model.limits.SKEW_FLOOR` (the model's :func:`~ktop.model.area_apiservers.skew`);
    no value (NaN) with one instance.
    """
    floor = f"{SKEW_FLOOR:g}"
    n = f"(count({by_instance}) - 1)"
    busiest, idlest, total = f"max({by_instance})", f"min({by_instance})", f"sum({by_instance})"
    high = f"clamp_min({busiest}, {floor}) / clamp_min(({total} - {busiest}) / {n}, {floor})"
    low = f"clamp_min(({total} - {idlest}) / {n}, {floor}) / clamp_min({idlest}, {floor})"
    return f"(({high}) >= ({low})) or ({low})"


REQUEST_SKEW = peer_skew(REQUESTS_BY_INSTANCE)
WATCH_SKEW = peer_skew(WATCHES)
DB_QUOTA = (
    "sum by (instance) ("
    + select("etcd_mvcc_db_total_size_in_bytes")
    + ") / sum by (instance) ("
    + select("etcd_server_quota_backend_bytes")
    + ")"
)
FRAGMENTATION = (
    "1 - sum by (instance) ("
    + select("etcd_mvcc_db_total_size_in_use_in_bytes")
    + ") / sum by (instance) ("
    + select("etcd_mvcc_db_total_size_in_bytes")
    + ")"
)
# only the leading controller-manager exports the zone gauges: max, not sum, so that a
# hand-over (two leaders' series for a moment) does not count a zone twice
ZONE_UNHEALTHY = "max by (zone) (" + select("node_collector_unhealthy_nodes_in_zone") + ")"
ZONE_SIZE = "max by (zone) (" + select("node_collector_zone_size") + ")"
UPTIME = "time() - max by (instance) (" + select("process_start_time_seconds") + ")"
