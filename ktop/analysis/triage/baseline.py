"""Where triage reads the cluster's own normal from: a signal history and what it holds.

Baseline-relative evidence (``api.cpu_vs_baseline`` ...) compares a reading
with its signal's :class:`~ktop.analysis.trends.Baseline` (median and spread)
over the *quiet window* of a history: every point older than
:data:`~ktop.analysis.trends.BASELINE_MIN_AGE_S` before the snapshot. The
history is the snapshot's own (:class:`~ktop.model.history.HistoryView`);
what it holds decides the name shown with the verdicts:

* ``Prometheus history, last N min`` when the quiet window reaches into the
  points backfilled from Prometheus at start (``--prometheus``);
* ``this run so far`` when it holds only what this ktop run measured;
* ``recording`` when the history was rebuilt from a recording.

With no point old enough, there is no baseline yet, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ktop.analysis.trends import BASELINE_MIN_AGE_S, MIN_BASELINE_POINTS, Baseline, signal_baseline
from ktop.model.history import HistoryView
from ktop.model.snapshot import ClusterSnapshot

NO_BASELINE = "no baseline yet (needs a longer run, a recording or Prometheus history)"


class HistoryKind(StrEnum):
    """Who measured the points of a history (apart from any Prometheus backfill)."""

    THIS_RUN = "this run so far"
    RECORDING = "recording"


PROMETHEUS = "Prometheus history"


@dataclass(frozen=True, slots=True)
class BaselineSource:
    """A history to take each signal's baseline from, and its name in reports."""

    history: HistoryView
    now: float
    """The snapshot's time: the quiet window ends :data:`BASELINE_MIN_AGE_S` before it."""
    kind: HistoryKind = HistoryKind.THIS_RUN

    @property
    def quiet_end(self) -> float:
        """The newest time a baseline point may have."""
        return self.now - BASELINE_MIN_AGE_S

    @property
    def from_prometheus(self) -> bool:
        """True when the quiet window holds points backfilled from Prometheus."""
        span, first = self.history.backfilled, self.history.first_at
        return span is not None and first is not None and first <= span[1]

    @property
    def covered_s(self) -> float:
        """How far back the history reaches from the snapshot (0 when empty)."""
        first = self.history.first_at
        return 0.0 if first is None else max(0.0, self.now - first)

    @property
    def name(self) -> str:
        """``Prometheus history, last 60 min``, ``this run so far`` or ``recording``."""
        if self.from_prometheus:
            return f"{PROMETHEUS}, last {self.covered_s / 60:.0f} min"
        return self.kind.value

    @property
    def ready(self) -> bool:
        """True when some point is old enough to be part of a baseline."""
        first = self.history.first_at
        return first is not None and first <= self.quiet_end

    def describe(self) -> str:
        """Which baseline is used, or why there is none yet (the report's ``baseline``)."""
        if not self.ready:
            return f"no baseline yet: {self.name} covers {self.covered_s:.0f} s"
        return f"{self.name} (median of each signal's points older than {BASELINE_MIN_AGE_S:.0f} s)"

    def of(self, signal_key: str) -> Baseline | None:
        """One signal's baseline, or None with too few points in the quiet window."""
        return signal_baseline(self.history, signal_key, self.now)

    def lacks(self, what: str) -> str:
        """Why one signal has no baseline, in words."""
        return (
            f"no baseline for {what}: fewer than {MIN_BASELINE_POINTS} points older than "
            f"{BASELINE_MIN_AGE_S:.0f} s in {self.name}"
        )


def baseline_source(snap: ClusterSnapshot, kind: HistoryKind) -> BaselineSource:
    """The snapshot's own history as a baseline source."""
    return BaselineSource(snap.history, snap.at, kind)
