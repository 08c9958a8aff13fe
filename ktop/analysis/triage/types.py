"""What triage produces: evidence with a status, a verdict per path, capacity figures."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ktop.analysis.findings import Finding
from ktop.analysis.trends import Trend
from ktop.model.events import Area


class Status(StrEnum):
    """One piece of evidence: ok, warn, bad, or unknown (with its reason in ``detail``)."""

    OK = "ok"
    WARN = "warn"
    BAD = "bad"
    UNKNOWN = "unknown"


class Verdict(StrEnum):
    """A path's conclusion. Never ``clear`` while first-line evidence is unknown."""

    SUSPECT = "suspect"
    CLEAR = "clear"
    UNKNOWN = "unknown"


VERDICT_RANK = {Verdict.SUSPECT: 0, Verdict.UNKNOWN: 1, Verdict.CLEAR: 2}
"""Most severe first."""


class Role(StrEnum):
    """A path's place in the diagnosis (``ktop/analysis/triage/diagnosis.py``)."""

    CAUSE = "cause"
    """The probable cause: the first suspect that no other suspect explains."""
    CONSEQUENCE = "consequence"
    """A suspect another suspect explains (``explained_by``): never a suspect on its own."""
    INDEPENDENT = "independent"
    """A second cause: suspect on its own evidence, and no other suspect explains it."""
    UNKNOWN = "unknown"
    CLEAR = "clear"


STATUS_RANK = {Status.BAD: 0, Status.WARN: 1, Status.UNKNOWN: 2, Status.OK: 3}


@dataclass(frozen=True, slots=True)
class Evidence:
    """One reading on a path, with its status and what it rests on."""

    id: str
    title: str
    status: Status
    value: float | None
    """The number, or None when unknown (or when the evidence is not a number)."""
    unit: str
    detail: str
    """The reading in words; for unknown evidence, the reason."""
    first_line: bool
    pane: Area | None
    """The pane that shows this evidence (None when no pane does)."""
    suspect: bool = False
    """True when this reading alone makes its path suspect."""
    note: bool = False
    """True when the reading passed an informational limit only (a note, as one pod
    pending in a large cluster): its status is ``ok``, yet it is not a plain pass."""
    signal: str = ""
    """The history key of the signal the reading rests on (its worst subject's), if any."""
    trend: Trend | None = None
    """Since when ``signal`` has been beyond the evidence's threshold and which way it goes
    (None when the evidence has no signal or is unknown)."""
    suspect_limit: float | None = None
    """The value of ``signal`` past which the reading makes its path suspect (None: it
    never does alone, or has no signal)."""
    held: bool = False
    """The reading is back within its limit, but not yet for
    :data:`~ktop.analysis.trends.CLEAR_HOLD_S`: it stays suspect (a cause in progress
    does not flip to no incident on a dip)."""

    @property
    def breaching(self) -> bool:
        """True for a warn or bad reading (or a held one) whose signal history shows when
        it began.
        """
        return (
            (self.status in (Status.WARN, Status.BAD) or self.held)
            and self.trend is not None
            and self.trend.since is not None
        )


@dataclass(frozen=True, slots=True)
class PathResult:
    """A path's verdict with its evidence, in the path's order."""

    id: str
    title: str
    verdict: Verdict
    evidence: tuple[Evidence, ...]
    conclusion: str
    """Where to look first (the correlation), or why the verdict is what it is."""
    direction: str
    """The first direction the path's catalogue entry gives."""
    role: Role | None = None
    """Its place in the diagnosis (None until :func:`~.diagnosis.diagnose` ranks it)."""
    explained_by: tuple[str, ...] = ()
    """For a consequence, the suspect paths that explain it, the first ranked first."""
    episode: Trend | None = None
    """The trend with its onset at the start of the path's suspect episode, its evidence's
    breach runs chained (``ktop/analysis/triage/onset.py``); None: not computed."""

    @property
    def onset(self) -> float | None:
        """When the path's problem began (its trend's ``since``); None without a history."""
        t = self.trend
        return None if t is None else t.since

    @property
    def trend(self) -> Trend | None:
        """Since when the path's problem has been growing: its :attr:`episode` when
        computed, else the earliest start among its suspect evidence with a history (among
        its warn or bad evidence when none is suspect); None when no such evidence has a
        history.
        """
        if self.episode is not None:
            return self.episode
        breaching = [e for e in self.evidence if e.breaching]
        chosen = [e for e in breaching if e.suspect] or breaching
        trends = [e.trend for e in chosen if e.trend is not None and e.trend.since is not None]
        return min(trends, key=lambda t: t.since or 0.0, default=None)

    @property
    def worst_status(self) -> Status:
        """The worst status among the evidence."""
        return min(
            (e.status for e in self.evidence), key=STATUS_RANK.__getitem__, default=Status.OK
        )


@dataclass(frozen=True, slots=True)
class Capacity:
    """One piece of capacity arithmetic from the seeds (000 §1.2, §7.2, §8.3)."""

    id: str
    title: str
    value: float | None
    unit: str
    detail: str
    """How it was computed, or why it is unknown."""


@dataclass(frozen=True, slots=True)
class TriageReport:
    """Every path's verdict in the diagnosis' order (the probable cause, the consequences
    it explains, independent suspects, then unknown and clear paths), plus the capacity
    figures.
    """

    paths: tuple[PathResult, ...]
    capacity: tuple[Capacity, ...]
    baseline: str
    """Which baseline was used, or why there is none."""
    at: float | None = None
    """The snapshot's time (what ``N m ago`` in trends counts from)."""
    talker: str = ""
    """The client dominating the busiest priority level, in words (``workload-low: 92% of
    seats system:serviceaccount:batch:reporter (list pods)``); empty when none does."""
    named: str = ""
    """What the probable cause's evidence names as the culprit, in words (``etcd-1 is
    defragmenting: reads and writes on it block until it ends``); empty when it names none."""
    critical: tuple[Finding, ...] = ()
    """The critical findings of the same snapshot: with no probable cause they still make
    an incident (one with no probable cause yet), never "no incident"."""

    @property
    def suspects(self) -> tuple[PathResult, ...]:
        """Every path whose own evidence makes it suspect (causes and consequences alike),
        in the diagnosis' order.
        """
        return tuple(p for p in self.paths if p.verdict is Verdict.SUSPECT)

    @property
    def cause(self) -> PathResult | None:
        """The probable cause; None when there is no incident."""
        return next((p for p in self.paths if p.role is Role.CAUSE), None)

    @property
    def independent(self) -> tuple[PathResult, ...]:
        """Suspects that no other suspect explains, after the probable cause."""
        return tuple(p for p in self.paths if p.role is Role.INDEPENDENT)

    @property
    def incident(self) -> bool:
        """True when there is a probable cause, or a critical finding stands without one
        (``ktop triage`` exits 1).
        """
        return self.cause is not None or bool(self.critical)
