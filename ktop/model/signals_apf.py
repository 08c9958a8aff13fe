"""The readings of the API Priority and Fairness area: per priority level.

Part of the registry of readings, :data:`ktop.model.signals.SIGNALS`, in display order.
"""

from __future__ import annotations

from ktop.model import limits
from ktop.model.extractors import per_level
from ktop.model.promql import PL, p99_by, rate_by, select
from ktop.model.reading import Chart, Reading
from ktop.model.scrape_targets import Component
from ktop.model.signal_areas import Area

_API = Component.APISERVER


APF_IN_QUEUE = Reading(
    "apf.in_queue",
    "in queue",
    "",
    _API,
    PL,
    f"sum by ({PL}) ({select('apiserver_flowcontrol_current_inqueue_requests')})",
    area=Area.APF,
    extract=per_level("in_queue"),
    threshold=limits.APF_IN_QUEUE,
    chart=Chart("sum", "in queue, all priority levels", 2),
)

APF_EXECUTING = Reading(
    "apf.executing",
    "executing",
    "",
    _API,
    PL,
    f"sum by ({PL}) ({select('apiserver_flowcontrol_current_executing_requests')})",
    area=Area.APF,
    extract=per_level("executing"),
    chart=Chart("sum", "executing, all priority levels", 4),
)

APF_REJECTED_PER_S = Reading(
    "apf.rejected_per_s",
    "rejected/s",
    "/s",
    _API,
    PL,
    rate_by(select("apiserver_flowcontrol_rejected_requests_total"), PL),
    area=Area.APF,
    extract=per_level("rejected_total_per_s"),
    threshold=limits.APF_REJECTIONS,
    chart=Chart("sum", "rejected/s, all priority levels", 1),
)

APF_WAIT_P99_S = Reading(
    "apf.wait_p99_s",
    "wait p99",
    "s",
    _API,
    PL,
    p99_by("apiserver_flowcontrol_request_wait_duration_seconds", PL),
    area=Area.APF,
    extract=per_level("wait_p99_s"),
    threshold=limits.APF_WAIT_P99,
    chart=Chart("max", "wait p99, worst priority level", 3),
)

APF_SIGNALS: tuple[Reading, ...] = (
    APF_IN_QUEUE,
    APF_EXECUTING,
    APF_REJECTED_PER_S,
    APF_WAIT_P99_S,
)
"""The apf area's signals, in display order."""
