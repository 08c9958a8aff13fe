"""The readings of the apiservers area: per instance, and the skews across them.

Part of the registry of readings, :data:`ktop.model.signals.SIGNALS`, in display order.
"""

from __future__ import annotations

from ktop.model import limits
from ktop.model.extractors import inflight, per_instance, slo_budget, slo_ratio, uptime, whole
from ktop.model.promql import INST, REQUEST_SKEW, UPTIME, WATCH_SKEW, WATCHES, rate_by, select
from ktop.model.reading import Chart, Reading
from ktop.model.scrape_targets import Component
from ktop.model.signal_areas import Area

_API = Component.APISERVER


API_REQUESTS_PER_S = Reading(
    "api.requests_per_s",
    "requests/s",
    "/s",
    _API,
    INST,
    rate_by(select("apiserver_request_total"), INST),
    area=Area.APISERVERS,
    extract=per_instance("requests_per_s"),
    chart=Chart("sum", "requests/s, all instances", 1),
)

API_INFLIGHT = Reading(
    "api.inflight",
    "inflight",
    "",
    _API,
    INST,
    f"sum by ({INST}) ({select('apiserver_current_inflight_requests')})",
    area=Area.APISERVERS,
    extract=inflight,
    chart=Chart("sum", "inflight, all instances", 3),
)

API_WATCHES = Reading(
    "api.watches",
    "watches",
    "",
    _API,
    INST,
    WATCHES,
    area=Area.APISERVERS,
    extract=per_instance("watches"),
    chart=Chart("sum", "watches, all instances", 4),
)

API_CPU_CORES = Reading(
    "api.cpu_cores",
    "CPU cores",
    "",
    _API,
    INST,
    rate_by(select("process_cpu_seconds_total"), INST),
    area=Area.APISERVERS,
    extract=per_instance("cpu_cores"),
    chart=Chart("max", "CPU cores, busiest instance", 5),
)

API_RSS_BYTES = Reading(
    "api.rss_bytes",
    "memory",
    "B",
    _API,
    INST,
    f"sum by ({INST}) ({select('process_resident_memory_bytes')})",
    area=Area.APISERVERS,
    extract=per_instance("rss_bytes"),
    chart=Chart("max", "memory, largest instance", 6),
)

API_THROTTLED_PER_S = Reading(
    "api.throttled_per_s",
    "429/s",
    "/s",
    _API,
    INST,
    rate_by(select("apiserver_request_total", ',code="429"'), INST),
    area=Area.APISERVERS,
    extract=per_instance("throttled_per_s"),
    threshold=limits.API_THROTTLED,
    chart=Chart("sum", "429/s, all instances", 2),
)

API_TERMINATIONS_PER_S = Reading(
    "api.terminations_per_s",
    "terminated/s",
    "/s",
    _API,
    INST,
    rate_by(select("apiserver_request_terminations_total"), INST),
    area=Area.APISERVERS,
    extract=per_instance("terminations_per_s"),
    threshold=limits.API_TERMINATIONS,
)

API_UPTIME_S = Reading(
    "api.uptime_s",
    "uptime",
    "s",
    _API,
    INST,
    UPTIME,
    higher_is_worse=False,
    area=Area.APISERVERS,
    extract=uptime,
)

API_SLO_RATIO = Reading(
    "api.slo_ratio",
    "p99 / SLO",
    "x",
    None,
    INST,
    "",
    area=Area.APISERVERS,
    extract=slo_ratio,
    threshold=limits.API_SLO,
    chart=Chart("max", "API call p99 / SLO limit, worst instance and kind", 7),
)

API_SLO_BUDGET = Reading(
    "api.slo_budget",
    "SLO budget burned",
    "ratio",
    None,
    INST,
    "",
    area=Area.APISERVERS,
    extract=slo_budget,
    threshold=limits.API_SLO_BUDGET,
)

API_REQUEST_SKEW = Reading(
    "api.request_skew",
    "request skew",
    "x",
    _API,
    "",
    REQUEST_SKEW,
    area=Area.APISERVERS,
    extract=whole(lambda s: s.apiservers.request_skew),
    threshold=limits.API_SKEW,
)

API_WATCH_SKEW = Reading(
    "api.watch_skew",
    "watch skew",
    "x",
    _API,
    "",
    WATCH_SKEW,
    area=Area.APISERVERS,
    extract=whole(lambda s: s.apiservers.watch_skew),
    threshold=limits.API_SKEW,
)

APISERVER_SIGNALS: tuple[Reading, ...] = (
    API_REQUESTS_PER_S,
    API_INFLIGHT,
    API_WATCHES,
    API_CPU_CORES,
    API_RSS_BYTES,
    API_THROTTLED_PER_S,
    API_TERMINATIONS_PER_S,
    API_UPTIME_S,
    API_SLO_RATIO,
    API_SLO_BUDGET,
    API_REQUEST_SKEW,
    API_WATCH_SKEW,
)
"""The apiservers area's signals, in display order."""
