"""The status line: source, source clock (and the simulator's pace when it falls behind),
per-area data state (waiting, fresh, stale, failed), findings counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum

from rich.text import Text

from ktop.analysis.findings import Finding
from ktop.model.areas import AREAS
from ktop.model.clock import CLOCK_STEP_S
from ktop.model.events import Area, SimPace
from ktop.model.providers import short_name
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.text import fmt_age, fmt_clock, truncate
from ktop.ui.render.cost import cost_segment
from ktop.ui.render.findings import counts
from ktop.ui.render.level import STALE_AFTER_S, STALE_STYLE, STYLE, SYMBOL, Level

SEP = " │ "


class AreaState(StrEnum):
    """What an area's data is: the states the status line and the panels tell apart."""

    CONNECTING = "connecting"
    """The source has not started yet and no input of the area has answered or failed:
    unknown, never failed."""
    FRESH = "fresh"
    """Its stalest input delivered within :data:`STALE_AFTER_S`, and none failed."""
    WAITING = "waiting"
    """No input of it has answered yet, and its first data is not due yet."""
    STALE = "stale"
    """Its stalest input is older than :data:`STALE_AFTER_S`, and none failed."""
    FAILED = "failed"
    """An input's last attempt failed, or its first data is overdue (never read)."""


def area_state(snapshot: ClusterSnapshot, area: Area) -> AreaState:
    """The area's state: connecting, waiting, fresh, stale or failed (never two at once)."""
    if snapshot.area_waiting_s(area) is not None:
        return AreaState.WAITING
    if snapshot.started_at is None and not any(
        f.last_ok is not None or f.error for f in snapshot.area_freshness(area)
    ):
        return AreaState.CONNECTING
    age = snapshot.area_age_s(area)
    if age is None or any(f.error for f in snapshot.area_freshness(area)):
        return AreaState.FAILED
    return AreaState.STALE if age > STALE_AFTER_S else AreaState.FRESH


COARSE_AGE_STEP_S = STALE_AFTER_S / 4
"""Low-bandwidth mode shows a fresh area's age in steps of this many seconds (``<15s``,
``15s``, ``30s``, ``45s``): a real age, whose text changes at most once a step."""

PANEL_AGE_STEP_S = CLOCK_STEP_S
"""A panel's border shows a fresh area's age in steps of this many seconds."""


def _stepped(age: float, step: float) -> str:
    """``<15s`` below one step, else the age rounded down to a whole step."""
    return f"<{fmt_age(step)}" if age < step else fmt_age(age // step * step)


def _due(snapshot: ClusterSnapshot, area: Area, step: float) -> str:
    """When a waiting area's first data is due, rounded up to ``step`` seconds (never
    sooner than it is): ``26s``.
    """
    due_in = snapshot.area_due_in_s(area) or 0.0
    return fmt_age(math.ceil(due_in / step) * step)


def area_age(snapshot: ClusterSnapshot, area: Area, coarse: bool = False) -> tuple[str, bool]:
    """The area's data age as the status line gives it, and whether it is stale or failed:
    ``due 26s`` while waiting, ``12s`` when fresh, the stalest input's age (``2m``,
    ``never``) when stale or failed.

    ``coarse`` (low-bandwidth mode) gives a fresh area's age and a waiting one's due time
    in steps of :data:`COARSE_AGE_STEP_S`, so that the text does not change, and need not
    be redrawn, every second.
    """
    state = area_state(snapshot, area)
    if state is AreaState.CONNECTING:
        return CONNECTING_WORD, False
    if state is AreaState.WAITING:
        return f"due {_due(snapshot, area, COARSE_AGE_STEP_S if coarse else 1)}", False
    age = snapshot.area_age_s(area)
    if coarse and state is AreaState.FRESH and age is not None:
        return _stepped(age, COARSE_AGE_STEP_S), False
    return fmt_age(age), state is not AreaState.FRESH


def _words(snapshot: ClusterSnapshot, area: Area, fresh: str, due_step: float) -> str:
    """A panel's state in words: ``due in 30s``, ``fresh`` as given, ``stale 2m``,
    ``failed 2m``, ``failed, never read``.
    """
    state = area_state(snapshot, area)
    if state is AreaState.CONNECTING:
        return CONNECTING_WORD
    if state is AreaState.WAITING:
        return f"due in {_due(snapshot, area, due_step)}"
    if state is AreaState.FRESH:
        return fresh
    age = snapshot.area_age_s(area)
    if age is None:
        return "failed, never read"
    return f"{state.value} {fmt_age(age)}"


def panel_age(snapshot: ClusterSnapshot, area: Area, coarse: bool = False) -> tuple[str, bool]:
    """What a panel's border says of its data, and whether it is stale or failed:
    ``due in 30s`` while waiting, ``stale 2m``, ``failed 2m`` or ``failed, never read``,
    and a fresh age in steps of :data:`PANEL_AGE_STEP_S` (``<5s``, ``5s``, ``10s`` ...),
    so that an idle screen redraws each border at most once a step rather than every
    second (a waiting area's due time too, rounded up). A stale or failed area's age is
    exact; the status line keeps the exact seconds.
    """
    step = COARSE_AGE_STEP_S if coarse else PANEL_AGE_STEP_S
    age = snapshot.area_age_s(area)
    fresh = "" if age is None else _stepped(age, step)
    words = _words(snapshot, area, fresh, step)
    return words, area_state(snapshot, area) in (AreaState.STALE, AreaState.FAILED)


def state_words(snapshot: ClusterSnapshot, area: Area) -> str:
    """The area's state in words with exact seconds (``ktop snapshot``): ``due in 26s``,
    ``12s``, ``stale 2m``, ``failed 2m``, ``failed, never read``.
    """
    return _words(snapshot, area, fmt_age(snapshot.area_age_s(area)), 1)


CONNECTING_WORD = "connecting"
"""An area's state before its source has started (no input answered or failed yet)."""
CONNECTING_STYLE = STYLE[Level.UNKNOWN]
"""How a connecting area reads: unknown, neither healthy nor failed."""
WAITING_STYLE = "dim"
"""A waiting area's due time: neither fresh nor failed."""
FAILED_MARK = SYMBOL[Level.CRIT]
"""In front of a failed area's age in the status line (``etcd ✖2m``); a stale one's is
followed by ``!`` (``etcd 2m!``)."""


def connecting(snapshot: ClusterSnapshot) -> bool:
    """Whether every area is still connecting: nothing has answered or failed yet."""
    return all(area_state(snapshot, area) is AreaState.CONNECTING for area in Area)


CONNECTING_HEADLINE = "Connecting: no input has answered yet, no diagnosis before it does"
"""The headline while every area connects (instead of "no verdict": nothing was asked)."""


def connecting_headline(width: int) -> Text:
    """The headline of a screen whose every area is still connecting, fitted to ``width``."""
    return Text(
        truncate(f"{SYMBOL[Level.UNKNOWN]} {CONNECTING_HEADLINE}", width), style=CONNECTING_STYLE
    )


def ages(snapshot: ClusterSnapshot, coarse: bool = False) -> Text:
    """``apf 2s api 1s etcd 5m! sched due 26s nodes ✖never``: stale ones marked ``!``,
    failed ones ``✖``, both highlighted; waiting ones (first data not yet due) dim with
    when it is due. While every area waits: ``waiting for first data, due in 26s``.
    """
    states = {area: area_state(snapshot, area) for area in Area}
    if all(st is AreaState.CONNECTING for st in states.values()):
        return Text(f"{SYMBOL[Level.UNKNOWN]} {CONNECTING_WORD}", style=CONNECTING_STYLE)
    if all(st is AreaState.WAITING for st in states.values()):
        due = area_age(snapshot, Area.APF, coarse)[0].removeprefix("due ")
        return Text(f"waiting for first data, due in {due}", style=WAITING_STYLE)
    out = Text()
    for area, state in states.items():
        text, _ = area_age(snapshot, area, coarse)
        if out:
            out.append(" ")
        out.append(f"{AREAS[area].short} ")
        if state is AreaState.FAILED:
            out.append(FAILED_MARK + text, style=STALE_STYLE)
        elif state is AreaState.STALE:
            out.append(text + "!", style=STALE_STYLE)
        elif state is AreaState.WAITING:
            out.append(text, style=WAITING_STYLE)
        elif state is AreaState.CONNECTING:
            out.append(text, style=CONNECTING_STYLE)
        else:
            out.append(text)
    return out


def _speed(speed: float) -> str:
    """``3.2x``, ``12x``, ``0.4x``."""
    return f"{speed:.0f}x" if speed >= 10 else f"{speed:.1f}x"


def pace_segment(pace: SimPace | None, short: bool = False) -> Text:
    """``sim 3.2x of 5x (machine busy)`` (``short``: ``sim 3.2x/5x``) while the simulator's
    clock falls behind the asked speed; empty otherwise.
    """
    if pace is None or not pace.behind:
        return Text()
    asked = f"{pace.speed:g}x"
    if short:
        return Text(f"sim {_speed(pace.effective_speed)}/{asked}", style=STYLE[Level.WARN])
    text = f"sim {_speed(pace.effective_speed)} of {asked} (machine busy)"
    return Text(text, style=STYLE[Level.WARN])


def status_line(
    snapshot: ClusterSnapshot, findings: Sequence[Finding], width: int, coarse: bool = False
) -> Text:
    """One line that fits ``width``: source and context, clock (with the simulator's pace
    while it falls behind), ages, findings counts.

    Separators shrink before the source name is cut. ``coarse`` (low-bandwidth
    mode) shows the clock to the minute and coarse ages, so the line changes
    far less often than every second.
    """
    clock = fmt_clock(snapshot.at) if snapshot.at else "--:--:--"
    clock_text = Text(f"{clock[:5] if coarse else clock}Z")
    tail = counts(findings)
    age_text = ages(snapshot, coarse)
    pace = pace_segment(snapshot.pace)
    if pace and width - len(clock_text) - len(age_text) - len(tail) - len(pace) - 13 < 12:
        pace = pace_segment(snapshot.pace, short=True)  # no room for the words
    if pace:
        clock_text.append(" ")
        clock_text.append_text(pace)
    cost = cost_segment(snapshot.self_cost)
    if cost and width - len(clock_text) - len(age_text) - len(tail) - len(cost) - 12 >= 12:
        # Room for ktop's own load: the age segment carries it.
        age_text = Text.assemble(age_text, (SEP, "dim"), cost)
    source = f"{snapshot.source_kind or 'no source'} {snapshot.context}".strip()
    if provider := short_name(snapshot.provider):
        source += f" ({provider})"  # cut first when the line is narrow
    sep = SEP
    for sep in (SEP, "│"):
        room = width - len(clock_text) - len(age_text) - len(tail) - 3 * len(sep)
        if room >= len(source):
            break
    out = Text(truncate(source, max(4, room)), style="bold")
    for part in (clock_text, age_text, tail):
        out.append(sep, style="dim")
        out.append_text(part)
    out.truncate(width)
    return out


def error_lines(errors: Sequence[str], width: int) -> tuple[Text, ...]:
    """One line per source error."""
    return tuple(Text(truncate(f"✖ {e}", width), style=STYLE[Level.CRIT]) for e in errors)
