"""The registry of readings: every number ktop keeps a history of, charts and grades.

One table (:data:`SIGNALS`) defines each reading once: its id (the metric part of its
history key, also its JSON name), its title and unit, the label that tells its subjects
apart (priority level, instance, zone ...), the pure function that reads it from a
snapshot, the threshold it is graded by (from :mod:`ktop.model.limits`), the chart it
gets in its area's drill-down, and the PromQL that computes the same number from
Prometheus (empty when Prometheus does not hold it, e.g. node conditions read from the
API). Everything else derives from it: the history (:func:`read_signals`), the
Prometheus backfill, the trend charts and sparklines (``ktop/ui/render/trend.py``), the
colour of a reading on screen (:meth:`Reading.status`), the trend of a finding, and the
signals table of docs/panes.md. Each area's readings are defined in their own module
(``ktop/model/signals_apf.py``, ``signals_apiservers.py``, ``signals_etcd.py``,
``signals_scheduler.py``, ``signals_nodes.py``); :data:`SIGNALS` joins them in display
order.

A signal key is ``"<metric>|<subject>"`` (subject empty for cluster-wide
signals), a plain string so that history can be serialized as it is.
History is kept per aggregate (a priority level, an instance, a zone),
never per node.

How to add a reading: docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from ktop.model.extractors import PerMember
from ktop.model.reading import Reading, key
from ktop.model.series import WINDOW_S
from ktop.model.signal_areas import Area
from ktop.model.signals_apf import APF_SIGNALS
from ktop.model.signals_apiservers import APISERVER_SIGNALS
from ktop.model.signals_etcd import ETCD_SIGNALS
from ktop.model.signals_nodes import NODE_SIGNALS
from ktop.model.signals_scheduler import SCHEDULER_SIGNALS
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.values import Val

SIGNALS: tuple[Reading, ...] = (
    *APF_SIGNALS,
    *APISERVER_SIGNALS,
    *ETCD_SIGNALS,
    *SCHEDULER_SIGNALS,
    *NODE_SIGNALS,
)
"""Every signal with a history, in display order."""

BY_METRIC: dict[str, Reading] = {s.metric: s for s in SIGNALS}
"""Every reading by its id."""

MEMBER_READINGS: tuple[Reading, ...] = tuple(r for r in SIGNALS if isinstance(r.extract, PerMember))
"""The readings of each etcd member (their columns and JSON fields are the members')."""


def area_charts(area: Area) -> tuple[Reading, ...]:
    """The readings an area charts, most telling first."""
    charted = [r for r in SIGNALS if r.area is area and r.chart is not None]
    return tuple(sorted(charted, key=lambda r: r.chart.rank if r.chart else 0))


def _known(items: Iterator[tuple[str, Val]]) -> Iterator[tuple[str, float]]:
    for k, v in items:
        if v.value is not None:
            yield k, v.value
        elif v.empty:
            yield k, 0.0


def read_signals(s: ClusterSnapshot) -> dict[str, float]:
    """Every signal's current value in a snapshot (unknown values are left out;
    values with nothing to measure, such as an idle level's wait, count as 0).
    """
    return dict(_known(_pairs(s)))


def _pairs(s: ClusterSnapshot) -> Iterator[tuple[str, Val]]:
    for reading in SIGNALS:
        if reading.extract is not None:
            for subject, v in reading.extract(s):
                yield key(reading.metric, subject), v


def markdown_table(window_s: float = WINDOW_S) -> str:
    """The signals table of docs/panes.md (from :data:`SIGNALS`; ``make docs`` writes it)."""
    rows = [
        f"| signal | per | unit | PromQL used for the backfill (window {window_s:.0f} s) |",
        "|---|---|---|---|",
    ]
    for s in SIGNALS:
        per = s.subject_label or "cluster"
        if s.promql:
            job = "<job>" if s.component is None else f"<{s.component.value} job>"
            query = "`" + s.promql.format(job=job, w=int(window_s)).replace("|", "\\|") + "`"
        else:
            query = "not in Prometheus (read from the API): history starts with ktop"
        rows.append(f"| `{s.metric}` {s.label} | {per} | {s.unit or '-'} | {query} |")
    return "\n".join(rows)
