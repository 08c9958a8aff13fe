"""The readings of the scheduler area: queues, attempts, bindings and why pods wait.

Part of the registry of readings, :data:`ktop.model.signals.SIGNALS`, in display order.
"""

from __future__ import annotations

from ktop.model.extractors import attempts, queues, reason_pods, waiting_pods, whole
from ktop.model.promql import rate_by, select
from ktop.model.reading import Chart, Reading
from ktop.model.scrape_targets import Component
from ktop.model.signal_areas import Area

_API = Component.APISERVER
_SCHED = Component.SCHEDULER


SCHED_PENDING = Reading(
    "sched.pending",
    "pending",
    "",
    _SCHED,
    "queue",
    f"sum by (queue) ({select('scheduler_pending_pods')})",
    area=Area.SCHEDULER,
    extract=queues,
    chart=Chart("sum", "pending pods, all queues", 1),
)

SCHED_ATTEMPTS_PER_S = Reading(
    "sched.attempts_per_s",
    "attempts/s",
    "/s",
    _SCHED,
    "result",
    rate_by(select("scheduler_schedule_attempts_total"), "result"),
    area=Area.SCHEDULER,
    extract=attempts,
    chart=Chart("sum", "scheduling attempts/s", 3),
)

SCHED_BINDINGS_PER_S = Reading(
    "sched.bindings_per_s",
    "bound/s",
    "/s",
    _API,
    "",
    "sum(rate("
    + select("apiserver_request_total", ',verb="POST",subresource="binding",code="201"')
    + "[{w}s]))",
    higher_is_worse=False,
    area=Area.SCHEDULER,
    extract=whole(lambda s: s.scheduler.bindings_per_s),
    chart=Chart("sum", "pods bound/s (the apiservers' count)", 4),
)

SCHED_REASON_PODS = Reading(
    "sched.reason_pods",
    "pods blocked",
    "",
    None,
    "reason",
    area=Area.SCHEDULER,
    extract=reason_pods,
    chart=Chart("max", "pods blocked by the top reason", 2),
)

SCHED_WAITING_PODS = Reading(
    "sched.waiting_pods",
    "pending pods",
    "",
    None,
    "wait",
    area=Area.SCHEDULER,
    extract=waiting_pods,
)

SCHEDULER_SIGNALS: tuple[Reading, ...] = (
    SCHED_PENDING,
    SCHED_ATTEMPTS_PER_S,
    SCHED_BINDINGS_PER_S,
    SCHED_REASON_PODS,
    SCHED_WAITING_PODS,
)
"""The scheduler area's signals, in display order."""
