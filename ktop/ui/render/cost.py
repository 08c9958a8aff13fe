"""ktop's own load on the cluster, as the status line and drill-downs show it."""

from __future__ import annotations

from rich.text import Text

from ktop.model.events import SelfCost
from ktop.model.text import fmt_bytes


def cost_segment(cost: SelfCost | None) -> Text:
    """Short form for the status line: ``me 0.4r/s 12KiB/s 4w``; empty without a live source."""
    if cost is None:
        return Text()
    text = f"me {cost.requests_per_s:.1f}r/s {fmt_bytes(cost.bytes_per_s)}/s {cost.open_watches}w"
    return Text(text, style="dim" if cost.throttled_total == 0 else "bold")


def cost_line(cost: SelfCost | None) -> Text | None:
    """One sentence for drill-downs: load, totals, and where its requests land in APF."""
    if cost is None:
        return None
    where = (
        f"flow schema {cost.flow_schema or '?'} -> priority level {cost.priority_level or '?'}"
        if cost.flow_schema or cost.priority_level
        else "APF level not reported yet"
    )
    throttled = f", {cost.throttled_total} answered 429" if cost.throttled_total else ""
    dest = destinations(cost)
    return Text(
        f"ktop's own load: {cost.requests_per_s:.1f} req/s, {fmt_bytes(cost.bytes_per_s)}/s, "
        f"{cost.open_watches} watches open, {cost.requests_total:,} requests so far{throttled}"
        f"{f' ({dest})' if dest else ''}; its requests land in {where}",
        style="dim",
    )


def destinations(cost: SelfCost) -> str:
    """Requests and bytes so far per destination: ``apiserver 120 (1.2MiB), prometheus 45 ...``."""
    return ", ".join(f"{d} {n:,} ({fmt_bytes(b)})" for d, n, b in cost.by_destination)
