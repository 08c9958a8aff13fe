"""What a component's counters say since its process started, when it started within the
window.

A one-shot reads a few seconds of scrapes, and a counter's increase over those seconds
misses what happened a minute before. A counter starts at zero with its process
(``process_start_time_seconds``), so in a process that started within the window, its
value now is everything it counted within the window, whenever ktop's first scrape of
it was: its increase over the window is its value minus its value at the start. In a
process that started before the window, how much of its lifetime count fell within the
window cannot be known from the counter alone (Prometheus' range, or two scrapes, can).

Certain, and only this: the process' own start time (its clock: a skew between the
hosts' clocks moves the window's edge by as much), and that every count of such a
process happened after it started. Not certain: when within the window each count
happened.
"""

from __future__ import annotations

from collections.abc import Sequence

from ktop.model.series_window import IDENTITY, Key, SeriesWindow
from ktop.model.values import Val


def started_within(ts: SeriesWindow) -> float | None:
    """The process' start time (Unix seconds, its own clock) when it started within the
    window before the target's last scrape; None when it started earlier or is not known.
    """
    start = ts.gauge(IDENTITY)
    if start.value is None or ts.last_at is None:
        return None
    if start.value < ts.last_at - ts.window_s or start.value > ts.last_at:
        return None
    return start.value


def since_start(ts: SeriesWindow, name: str, start_value: float = 0.0) -> float | None:
    """What counter ``name`` counted since its process started within the window: its
    latest value less ``start_value`` (what the process counts as it starts, before any
    event of interest), at least 0; None when the process started before the window, or
    the counter or the start time is not exposed.
    """
    if started_within(ts) is None:
        return None
    value = ts.gauge(name)
    if value.value is None:
        return None
    return max(0.0, value.value - start_value)


def increase_since_start(
    ts: SeriesWindow, name: str, start_value: float = 0.0
) -> tuple[Val, float | None]:
    """The counter's increase over the window, and the start time of its process when the
    count since that start (:func:`since_start`) is what it is: more than ktop's own
    scrapes saw, or all there is (one scrape). ktop's own increase stands when its scrapes
    saw the start (a reset within them) or the process started before the window.
    """
    seen = ts.increase(name)
    counted = since_start(ts, name, start_value)
    if counted is None or (seen.value is not None and seen.value >= counted):
        return seen, None
    return Val.of(counted), started_within(ts)


def rate_by_since_start(ts: SeriesWindow, name: str, by: Sequence[str]) -> dict[Key, Val]:
    """Counter ``name``'s rate per group over the window; for a process that started
    within the window, where its count since that start is more than ktop's own scrapes
    saw, that count over the seconds it has run (a one-shot after an APF flood that ended
    before it: the rejections the apiserver counted since it started, not the none of
    ktop's last seconds).
    """
    seen = ts.rate_by(name, by)
    start = started_within(ts)
    if start is None or ts.last_at is None or ts.last_at <= start:
        return seen
    ran_s = ts.last_at - start
    out = dict(seen)
    for k, total in ts.gauge_by(name, by).items():
        if total.value is None:
            continue
        own = seen.get(k)
        if own is None or own.value is None or own.value < total.value / ran_s:
            out[k] = Val.of(total.value / ran_s)
    return out
