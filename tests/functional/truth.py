"""Ground truth straight from the simulator's events, and numbers read back off the screen.

Functional tests compare the two, so they check that the numbers are right, not
that the screen matches ktop's own formatters: neither side uses ktop's model
or ``ktop.model.text``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from ktop.model import events as ev

_UNITS = {
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "x": 1.0,
    "": 1.0,
}
_NUMBER = re.compile(r"^~?(-?[\d,]*\.?\d+)(µs|ms|s|m|h|d|k|M|G|x|)(?:/s)?$")


def number(text: str) -> float:
    """``1,234`` -> 1234, ``612ms`` -> 0.612, ``1.2k/s`` -> 1200, ``3.5m`` -> 210,
    ``▲612ms`` -> 0.612."""
    m = _NUMBER.match(text.strip().lstrip("✖▲"))  # a warn or bad reading carries its symbol
    assert m, f"not a number on screen: {text!r}"
    return float(m.group(1).replace(",", "")) * _UNITS[m.group(2)]


def close(shown: str, truth: float, digits: int = 2) -> bool:
    """Whether a shown number is ``truth`` to the precision a screen shows (2-3 digits)."""
    value = number(shown)
    if truth == 0:
        return value == 0
    return math.isclose(value, truth, rel_tol=10 ** (1 - digits) * 0.6)


def nodes_by_zone(events: Iterable[ev.Event]) -> dict[str, tuple[int, int, int]]:
    """Per zone: (Ready=True, total, Ready=Unknown) from the last record of every node."""
    last: dict[str, ev.NodeRecord] = {}
    for e in events:
        if isinstance(e, ev.NodeUpserted):
            last[e.node.name] = e.node
        elif isinstance(e, ev.NodeDeleted):
            last.pop(e.name, None)
    out: dict[str, list[int]] = {}
    for n in last.values():
        z = out.setdefault(n.zone, [0, 0, 0])
        z[0] += n.ready is ev.Readiness.TRUE
        z[1] += 1
        z[2] += n.ready is ev.Readiness.UNKNOWN
    return {k: (a, b, c) for k, (a, b, c) in out.items()}


def pending_by_wait(events: Iterable[ev.Event]) -> dict[ev.PodWait, int]:
    """Pending pods by why they wait, from the last record of every pod."""
    last: dict[tuple[str, str], ev.PodWait] = {}
    for e in events:
        if isinstance(e, ev.PendingPodUpserted):
            last[(e.pod.namespace, e.pod.name)] = e.pod.wait
        elif isinstance(e, ev.PendingPodDeleted):
            last.pop((e.namespace, e.name), None)
    out: dict[ev.PodWait, int] = {}
    for w in last.values():
        out[w] = out.get(w, 0) + 1
    return out


def _histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float:
    b = sorted(buckets)
    rank = q * b[-1][1]
    prev_le, prev_c = 0.0, 0.0
    for le, c in b:
        if c >= rank:
            if math.isinf(le):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_c) / (c - prev_c)
        prev_le, prev_c = le, c
    raise AssertionError("rank not reached")


def window_quantile(
    events: Sequence[ev.Event], instance: str, family: str, window_s: float, q: float = 0.99
) -> float:
    """``histogram_quantile(q, increase(family_bucket[window]))`` for one target, by hand."""
    scrapes = [
        e for e in events if isinstance(e, ev.MetricsScraped) and e.target.instance == instance
    ]
    now = max(e.at for e in scrapes)
    inside = [e for e in scrapes if e.at >= now - window_s]
    first, last = inside[0], inside[-1]

    def buckets(e: ev.MetricsScraped) -> dict[float, float]:
        out: dict[float, float] = {}
        for s in e.samples:
            if s.name == family + "_bucket":
                le = float(dict(s.labels)["le"])
                out[le] = out.get(le, 0.0) + s.value
        return out

    a, b = buckets(first), buckets(last)
    return _histogram_quantile(q, [(le, b[le] - a.get(le, 0.0)) for le in b])


def _scrapes(events: Sequence[ev.Event], instance: str) -> list[ev.MetricsScraped]:
    return [e for e in events if isinstance(e, ev.MetricsScraped) and e.target.instance == instance]


def _value(e: ev.MetricsScraped, name: str, match: dict[str, str]) -> float | None:
    vals = [
        s.value
        for s in e.samples
        if s.name == name and all(dict(s.labels).get(k) == v for k, v in match.items())
    ]
    return sum(vals) if vals else None


def window_increase(
    events: Sequence[ev.Event],
    instance: str,
    name: str,
    window_s: float,
    match: dict[str, str] | None = None,
    *,
    per_s: bool = False,
) -> float:
    """A counter's increase (or rate) over the window for one target (no resets expected)."""
    scrapes = _scrapes(events, instance)
    now = max(e.at for e in scrapes)
    pts = [
        (e.at, v)
        for e in scrapes
        if e.at >= now - window_s and (v := _value(e, name, match or {})) is not None
    ]
    (t0, v0), (t1, v1) = pts[0], pts[-1]
    inc = v1 - v0
    return inc / (t1 - t0) if per_s else inc


def latest(
    events: Sequence[ev.Event], instance: str, name: str, match: dict[str, str] | None = None
) -> float:
    """A gauge's latest value for one target (summed over matching series)."""
    for e in reversed(_scrapes(events, instance)):
        v = _value(e, name, match or {})
        if v is not None:
            return v
    raise AssertionError(f"{name} never scraped from {instance}")


def instances(events: Sequence[ev.Event], component: ev.Component) -> list[str]:
    """The instances of a component that were scraped at least once."""
    seen = {
        e.target.instance
        for e in events
        if isinstance(e, ev.MetricsScraped) and e.target.component is component
    }
    return sorted(seen)
