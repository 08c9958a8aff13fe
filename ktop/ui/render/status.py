"""The status line: source, source clock, per-area data age, findings counts."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ktop.analysis.findings import Finding
from ktop.model.clock import CLOCK_STEP_S
from ktop.model.events import Area
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.text import fmt_age, fmt_clock, truncate
from ktop.ui.render.cost import cost_segment
from ktop.ui.render.findings import counts
from ktop.ui.render.level import STALE_AFTER_S, STALE_STYLE, STYLE, Level

AREA_SHORT: dict[Area, str] = {
    Area.APF: "apf",
    Area.APISERVERS: "api",
    Area.ETCD: "etcd",
    Area.SCHEDULER: "sched",
    Area.NODES: "nodes",
}
SEP = " │ "


WAITING = "wait"
"""An area's age while its first data is not yet due: waiting, neither fresh nor failed."""

COARSE_AGE_STEP_S = STALE_AFTER_S / 4
"""Low-bandwidth mode shows a fresh area's age in steps of this many seconds (``<15s``,
``15s``, ``30s``, ``45s``): a real age, whose text changes at most once a step."""


def _age(snapshot: ClusterSnapshot, area: Area) -> tuple[float | None, bool]:
    """The area's data age and whether it is stale (too old, failing or never read)."""
    age = snapshot.area_age_s(area)
    failing = any(f.error for f in snapshot.area_freshness(area))
    return age, age is None or age > STALE_AFTER_S or failing


def area_age(snapshot: ClusterSnapshot, area: Area, coarse: bool = False) -> tuple[str, bool]:
    """The area's data age text and whether it is stale (too old, failing or never read).

    ``coarse`` (low-bandwidth mode) gives a fresh area's age in steps of
    :data:`COARSE_AGE_STEP_S`, so that the text does not change, and need not be
    redrawn, every second.
    """
    if snapshot.area_waiting_s(area) is not None:
        return WAITING, False
    age, stale = _age(snapshot, area)
    if coarse and not stale and age is not None:
        return _stepped(age, COARSE_AGE_STEP_S), stale
    return fmt_age(age), stale


def _stepped(age: float, step: float) -> str:
    """``<15s`` below one step, else the age rounded down to a whole step."""
    return f"<{fmt_age(step)}" if age < step else fmt_age(age // step * step)


PANEL_AGE_STEP_S = CLOCK_STEP_S
"""A panel's border shows a fresh area's age in steps of this many seconds."""


def panel_age(snapshot: ClusterSnapshot, area: Area, coarse: bool = False) -> tuple[str, bool]:
    """The age a panel's border shows: as :func:`area_age`, but a fresh age in steps of
    :data:`PANEL_AGE_STEP_S` (``<5s``, ``5s``, ``10s`` ...), so that an idle screen
    redraws each border at most once a step rather than every second. A stale age is
    shown as :func:`area_age` shows it; the status line keeps the exact seconds.
    """
    if snapshot.area_waiting_s(area) is not None:
        return WAITING, False
    age, stale = _age(snapshot, area)
    if stale or age is None:
        return fmt_age(age), stale
    return _stepped(age, COARSE_AGE_STEP_S if coarse else PANEL_AGE_STEP_S), stale


def ages(snapshot: ClusterSnapshot, coarse: bool = False) -> Text:
    """``apf 2s api 1s etcd 5m! sched wait nodes never!``: stale and failed ones
    highlighted, waiting ones (first data not yet due) dim.
    """
    out = Text()
    for area in Area:
        text, stale = area_age(snapshot, area, coarse)
        if out:
            out.append(" ")
        out.append(f"{AREA_SHORT[area]} ")
        if stale:
            out.append(text + "!", style=STALE_STYLE)
        elif text == WAITING:
            out.append(text, style="dim")
        else:
            out.append(text)
    return out


def status_line(
    snapshot: ClusterSnapshot, findings: Sequence[Finding], width: int, coarse: bool = False
) -> Text:
    """One line that fits ``width``: source and context, clock, ages, findings counts.

    Separators shrink before the source name is cut. ``coarse`` (low-bandwidth
    mode) shows the clock to the minute and coarse ages, so the line changes
    far less often than every second.
    """
    clock = fmt_clock(snapshot.at) if snapshot.at else "--:--:--"
    clock = f"{clock[:5] if coarse else clock}Z"
    tail = counts(findings)
    age_text = ages(snapshot, coarse)
    cost = cost_segment(snapshot.self_cost)
    if cost and width - len(clock) - len(age_text) - len(tail) - len(cost) - 12 >= 12:
        # Room for ktop's own load: the age segment carries it.
        age_text = Text.assemble(age_text, (SEP, "dim"), cost)
    source = f"{snapshot.source_kind or 'no source'} {snapshot.context}".strip()
    sep = SEP
    for sep in (SEP, "│"):
        room = width - len(clock) - len(age_text) - len(tail) - 3 * len(sep)
        if room >= len(source):
            break
    out = Text(truncate(source, max(4, room)), style="bold")
    for part in (Text(clock), age_text, tail):
        out.append(sep, style="dim")
        out.append_text(part)
    out.truncate(width)
    return out


def error_lines(errors: Sequence[str], width: int) -> tuple[Text, ...]:
    """One line per source error."""
    return tuple(Text(truncate(f"✖ {e}", width), style=STYLE[Level.CRIT]) for e in errors)
