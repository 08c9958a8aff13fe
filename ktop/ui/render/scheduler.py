"""Scheduler: pending pods by queue and wait category, FailedScheduling reasons, quota."""

from __future__ import annotations

from rich.text import Text

from ktop.analysis import catalogue
from ktop.model.area_scheduler import main_reason
from ktop.model.areas import AREAS
from ktop.model.events import ROW_NAMESPACE, PodWait, is_row
from ktop.model.signal_areas import Area
from ktop.model.snapshot_scheduler import QUEUES, SchedulerSnapshot
from ktop.model.text import (
    counted,
    fmt_age,
    fmt_bytes,
    fmt_count,
    fmt_duration,
    fmt_pct,
    fmt_rate,
    fmt_si,
    fmt_val,
    truncate,
)
from ktop.model.values import Val
from ktop.ui.render.level import SEVERITY_LEVEL, STYLE, SYMBOL, Level
from ktop.ui.render.sortkey import larger_first
from ktop.ui.render.view import (
    Column,
    LazyRows,
    PanelView,
    Row,
    TableSpec,
    degrade,
    fit,
    num_cell,
    text_cell,
    title,
    val_cell,
)

NAME = AREAS[Area.SCHEDULER].name
"""The panel's name on its border (the area registry's)."""
"""``scheduler_pending_pods`` queues in display order."""

WAIT_ORDER = (
    PodWait.UNSCHEDULABLE,
    PodWait.SCHEDULER_ERROR,
    PodWait.NOT_ATTEMPTED,
    PodWait.NOT_BOUND,
    PodWait.BOUND_NOT_STARTED,
    PodWait.GATED,
)
"""Wait categories: capacity and scheduler problems first, admission (gated) apart."""

WAIT_MEANING: dict[PodWait, str] = {
    PodWait.UNSCHEDULABLE: "tried, no node fits",
    PodWait.SCHEDULER_ERROR: "scheduler error",
    PodWait.NOT_ATTEMPTED: "not attempted yet",
    PodWait.NOT_BOUND: "not bound; listed as a row, so whether tried is not read",
    PodWait.BOUND_NOT_STARTED: "bound, not started (image, volumes, sandbox)",
    PodWait.GATED: "held by scheduling gates (admission, not capacity)",
}


def pending_total(s: SchedulerSnapshot) -> Val:
    """Pending pods seen through the API (all wait categories)."""
    if not s.pods_known:
        return Val.unknown(s.pods_reason or "pending-pods feed not synced")
    return Val.of(sum(s.pending_by_wait.values()))


def waiting(s: SchedulerSnapshot, wait: PodWait) -> int:
    """Pods in one wait category (0 when none)."""
    return s.pending_by_wait.get(wait, 0)


def level(s: SchedulerSnapshot) -> Level:
    """Unschedulable or erroring pods are a warning; no pod feed is unknown."""
    if not s.pods_known:
        return Level.UNKNOWN
    if waiting(s, PodWait.SCHEDULER_ERROR) or waiting(s, PodWait.UNSCHEDULABLE):
        return Level.WARN
    return Level.OK


def queue_line(s: SchedulerSnapshot, width: int) -> Text:
    """``queue active 3 · backoff 10 · unsched 1.2k`` (the scheduler's own gauge)."""
    names = {"unschedulable": "unsched"}
    parts = [
        f"{names.get(q, q)} {fmt_val(s.queue[q])}" for q in QUEUES if q in s.queue and q != "gated"
    ]
    return Text(truncate("queue " + (" · ".join(parts) or "?"), width))


def apart_line(s: SchedulerSnapshot, width: int) -> Text:
    """Gated pods and quota rejections, kept apart from unschedulable ones."""
    gated = fmt_count(waiting(s, PodWait.GATED)) if s.pods_known else "?"
    text = f"gated {gated} · quota-rej {fmt_count(s.quota_rejections)} (admission)"
    return Text(truncate(text, width), style="dim" if not s.quota_rejections else "")


def read_whole(s: SchedulerSnapshot) -> int:
    """Pending pods read whole (the rest were listed as rows without their objects)."""
    return len(s.pending_pods) - s.pending_rows


def sample_line(s: SchedulerSnapshot, width: int) -> Text:
    """``reasons of 200 pods read whole; 800 listed as rows`` (a long list)."""
    text = (
        f"reasons of {fmt_count(read_whole(s))} pods read whole; "
        f"{fmt_count(s.pending_rows)} listed as rows"
    )
    return Text(truncate(text, width), style="dim")


def reason_line(count: float, reason: str, width: int) -> Text:
    """``  1,100 Insufficient cpu``."""
    out = Text(f"{fmt_count(count):>6} ", style=STYLE[Level.WARN])
    out.append(truncate(reason, max(4, width - 7)))
    return out


def panel(
    s: SchedulerSnapshot, note: Text | None, rows: int, width: int, *, failing: bool = False
) -> PanelView:
    """The scheduler overview panel: queues, gated/quota apart, top reasons."""
    lvl = degrade(level(s), failing)
    summary = f"{fmt_val(pending_total(s), fmt_count)} pending"
    if s.bindings_per_s.known:
        summary += f" · bound {fmt_val(s.bindings_per_s, fmt_rate)}"
    if s.oldest_pending_s.known:
        summary += f" · oldest {fmt_val(s.oldest_pending_s, fmt_duration)}"
    body = [queue_line(s, width), apart_line(s, width)]
    if s.pending_rows:
        body.append(sample_line(s, width))
    body += [reason_line(r.pods, r.reason, width) for r in s.reasons]
    return PanelView(title(NAME, summary, lvl), fit(body, note, rows), lvl)


def tables(s: SchedulerSnapshot, now: float) -> tuple[TableSpec, ...]:
    """Drill-down: reasons with example pods, pending by wait category, queues and attempts,
    quotas near their limits, and every Pending pod.
    """
    of = (
        f", of the {fmt_count(read_whole(s))} pods read whole; "
        f"{fmt_count(s.pending_rows)} more listed as rows"
        if s.pending_rows
        else ""
    )
    reasons = TableSpec(
        "reasons",
        f"FailedScheduling reasons (pending pods blocked{of})",
        (
            Column("pods", "pods", 7),
            Column("nodes", "nodes", 7),
            Column("reason", "reason"),
            Column("examples", "example pods"),
        ),
        tuple(
            Row(
                r.reason,
                (
                    num_cell(fmt_count(r.pods), Level.WARN),
                    num_cell(fmt_count(r.nodes)),
                    text_cell(r.reason),
                    text_cell(", ".join(r.sample_pods)),
                ),
            )
            for r in s.reasons
        ),
    )
    wait_rows = [
        Row(
            wait.value,
            (
                text_cell(wait.value),
                num_cell(
                    fmt_count(waiting(s, wait)) if s.pods_known else "?",
                    Level.NEUTRAL if s.pods_known else Level.UNKNOWN,
                ),
                text_cell(WAIT_MEANING[wait], Level.NEUTRAL),
            ),
        )
        for wait in WAIT_ORDER
        if wait is not PodWait.NOT_BOUND or s.pending_rows  # rows only in a long list
    ]
    wait_rows.append(
        Row(
            "quota",
            (
                text_cell("quota-rejected"),
                num_cell(fmt_count(s.quota_rejections)),
                text_cell("FailedCreate: exceeded quota, pods never created"),
            ),
        )
    )
    waits = TableSpec(
        "waits",
        "Pending by wait category",
        (Column("category", "category"), Column("pods", "pods", 8), Column("meaning", "meaning")),
        tuple(wait_rows),
    )
    queue_rows = [
        Row(f"queue:{q}", (text_cell(f"queue {q}"), val_cell(v))) for q, v in s.queue.items()
    ]
    queue_rows += [
        Row(f"attempts:{r}", (text_cell(f"attempts {r}"), val_cell(v, fmt_rate)))
        for r, v in s.attempts_per_s.items()
    ]
    queue_rows.append(
        Row(
            "bound",
            (text_cell("pods bound (apiservers' count)"), val_cell(s.bindings_per_s, fmt_rate)),
        )
    )
    queue_rows.append(
        Row("oldest", (text_cell("oldest pending"), val_cell(s.oldest_pending_s, fmt_duration)))
    )
    queues = TableSpec(
        "queues",
        "Scheduler queues and attempts",
        (Column("what", "what"), Column("value", "value", 9)),
        tuple(queue_rows),
    )
    return (reasons, waits, queues, quota_table(s), pending_table(s, now))


def _amount(resource: str, value: float) -> str:
    return fmt_bytes(value) if "memory" in resource or "storage" in resource else fmt_si(value)


def quota_level(used_ratio: float) -> Level:
    """A quota's use graded as its finding grades it (warning at the limit, info near it)."""
    return SEVERITY_LEVEL[catalogue.SCHED_QUOTA_USED.grade(used_ratio)]


def quota_table(s: SchedulerSnapshot) -> TableSpec:
    """ResourceQuotas at or near their hard limits (a different layer from placement), the
    fullest first by the share as printed, then by name.
    """
    quotas = sorted(
        s.quotas_near_limit,
        key=lambda q: (larger_first(Val.of(q.ratio), fmt_pct), q.namespace, q.name, q.resource),
    )
    rows = tuple(
        Row(
            f"{q.namespace}/{q.name}/{q.resource}",
            (
                text_cell(f"{q.namespace}/{q.name}"),
                text_cell(q.resource),
                num_cell(_amount(q.resource, q.used)),
                num_cell(_amount(q.resource, q.hard)),
                num_cell(fmt_pct(q.ratio), quota_level(q.ratio)),
            ),
        )
        for q in quotas
    )
    empty = "none at 90 % or more" if s.quotas_known else "? ResourceQuotas not read"
    return TableSpec(
        "quotas",
        "ResourceQuotas near their limits (pods beyond them are refused at creation)",
        (
            Column("quota", "namespace/quota"),
            Column("resource", "resource"),
            Column("used", "used", 9),
            Column("hard", "hard", 9),
            Column("pct", "used %", 7),
        ),
        rows,
        empty=empty,
    )


def summary_line(s: SchedulerSnapshot) -> Text:
    """Drill-down header: pending total and the headline reason."""
    lvl = level(s)
    out = Text(f"{SYMBOL[lvl]} ", style=STYLE[lvl])
    out.append(f"{fmt_val(pending_total(s), fmt_count)} pending")
    if s.reasons:
        top = s.reasons[0]
        out.append(f" · top reason: {top.reason} ({counted(top.pods, 'pod')})")
    return out


def pending_table(s: SchedulerSnapshot, now: float) -> TableSpec:
    """Every Pending pod, the oldest first (rows built for the part on screen only)."""
    pods = s.pending_pods

    def row(i: int) -> Row:
        pod = pods[i]
        row = is_row(pod.namespace)
        return Row(
            f"{pod.namespace}/{pod.name}",
            (
                text_cell(ROW_NAMESPACE, Level.UNKNOWN) if row else text_cell(pod.namespace),
                text_cell(pod.name),
                text_cell(pod.wait.value),
                num_cell(fmt_age(now - pod.created)),
                text_cell("not read (a row)" if row else main_reason(pod) or "-"),
            ),
        )

    def search(i: int) -> str:
        pod = pods[i]
        return f"{pod.namespace} {pod.name} {pod.wait.value} {main_reason(pod)}".lower()

    empty = "none" if s.pods_known else f"? {s.pods_reason or 'pending pods not listed'}"
    return TableSpec(
        "pending",
        "Pending pods (oldest first)",
        (
            Column("namespace", "namespace"),
            Column("pod", "pod"),
            Column("wait", "waits", 13),
            Column("age", "for", 6),
            Column("reason", "main reason"),
        ),
        (),
        empty=empty,
        lazy=LazyRows(
            count=len(pods),
            row=row,
            search=search,
            sort_keys={
                "namespace": lambda i: (pods[i].namespace, pods[i].name),
                "pod": lambda i: (pods[i].name, pods[i].namespace),
                "wait": lambda i: (pods[i].wait.value, pods[i].created),
                "age": lambda i: -pods[i].created,
                "reason": lambda i: (main_reason(pods[i]), pods[i].created),
            },
            source=pods,
        ),
    )
