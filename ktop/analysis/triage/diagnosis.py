"""The differential diagnosis: one probable cause, the consequences it explains,
independent suspects, then unknown and clear paths.

Every path declares, as data, the symptoms (other paths) it can explain
(:attr:`~.paths.PathSpec.explains`). Among the suspect paths, one *explains* another
when it declares it and did not begin more than :data:`ONSET_SLACK_S` after it (a cause
does not start after its effect; when either has no history, the declaration alone
holds). A suspect that another suspect explains is a *consequence*: it is reported as
"explained by" that path, never as a suspect on its own. The suspects nothing explains
are candidate causes, ranked by onset (the earliest start first: what changed first),
then by the strength of their evidence (the worst status, then how many readings are
bad, suspect, or past a warning); the first is the *probable cause*, the others are
*independent suspects* (second causes their own evidence supports). Everything here is
pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ktop.analysis.findings import Finding
from ktop.analysis.trends import DIRECTION_WORDS, Direction, since_words
from ktop.analysis.triage.paths import BY_ID
from ktop.analysis.triage.place import path_place
from ktop.analysis.triage.types import (
    STATUS_RANK,
    VERDICT_RANK,
    PathResult,
    Role,
    Status,
    TriageReport,
    Verdict,
)

ONSET_SLACK_S = 60.0
"""A cause may cross its threshold this much after its consequence (readings cross their
own thresholds at different moments, a window's quantile lags its events)."""


def strength(p: PathResult) -> tuple[int, int, int, int]:
    """How strongly the evidence supports the path, strongest lowest: its worst status,
    then its counts of bad, suspect and warn readings.
    """
    bad = sum(1 for e in p.evidence if e.status is Status.BAD)
    suspect = sum(1 for e in p.evidence if e.suspect)
    warn = sum(1 for e in p.evidence if e.status is Status.WARN)
    return (STATUS_RANK[p.worst_status], -bad, -suspect, -warn)


def _onset_key(p: PathResult) -> float:
    """The path's onset; a path without a history ranks after those with one."""
    return math.inf if p.onset is None else p.onset


def rank_key(p: PathResult) -> tuple[float, tuple[int, int, int, int], str]:
    """Onset first (the earliest start), then strength of evidence, then the ID."""
    return (_onset_key(p), strength(p), p.id)


def explains(cause: PathResult, effect: PathResult) -> bool:
    """True when ``cause`` declares ``effect`` and did not begin well after it."""
    if cause.id == effect.id or effect.id not in BY_ID[cause.id].explained_ids:
        return False
    if cause.onset is None or effect.onset is None:
        return True
    return cause.onset <= effect.onset + ONSET_SLACK_S


def why(cause: str, effect: str) -> str:
    """How ``cause`` produces ``effect``, as its path declares; empty when it does not."""
    return next((x.why for x in BY_ID[cause].explains if x.path == effect), "")


def explained_words(p: PathResult) -> str:
    """``explained by ETCD: every write waits for etcd's commit`` (and any other explaining
    path); empty for a path that is not a consequence.
    """
    if not p.explained_by:
        return ""
    first = p.explained_by[0]
    out = f"explained by {first}"
    if reason := why(first, p.id):
        out += f": {reason}"
    if others := p.explained_by[1:]:
        out += f" (also by {', '.join(others)})"
    return out


def _reach(start: str, edges: Mapping[str, Sequence[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(edges[start])
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(edges[x])
    return seen


def _topological(members: Iterable[PathResult], edges: Mapping[str, Sequence[str]]) -> list[str]:
    """Members in an order where a path that explains another comes before it; ties (and
    any cycle) by :func:`rank_key`.
    """
    left = sorted(members, key=rank_key)
    out: list[str] = []
    while left:
        ids = {p.id for p in left}
        ready = [p for p in left if not any(p.id in edges[q] for q in ids - {p.id})]
        chosen = (ready or left)[0]
        out.append(chosen.id)
        left.remove(chosen)
    return out


def diagnose(results: Iterable[PathResult]) -> tuple[PathResult, ...]:
    """Every path with its role and ``explained_by``, in the diagnosis' order: the
    probable cause, then the consequences it explains; each independent suspect, then
    the consequences it explains (and no earlier path does); then unknown and clear
    paths, most bad evidence first.
    """
    results = list(results)
    suspects = {p.id: p for p in results if p.verdict is Verdict.SUSPECT}
    edges = {a.id: [b.id for b in suspects.values() if explains(a, b)] for a in suspects.values()}
    reach = {pid: _reach(pid, edges) for pid in suspects}
    # a candidate cause: no other suspect is strictly upstream of it
    candidates = [
        p
        for p in suspects.values()
        if not any(p.id in reach[q] and q not in reach[p.id] for q in suspects if q != p.id)
    ]
    roots: list[PathResult] = []
    for p in sorted(candidates, key=rank_key):
        if not any(p.id in reach[r.id] for r in roots):  # one of a cycle: the first stands
            roots.append(p)
    ordered: list[PathResult] = []
    done: set[str] = set()
    for i, root in enumerate(roots):
        group = [suspects[x] for x in reach[root.id] if x not in done and x != root.id]
        done |= {root.id} | {p.id for p in group}
        ordered.append(replace(root, role=Role.CAUSE if i == 0 else Role.INDEPENDENT))
        ordered += [suspects[x] for x in _topological(group, edges)]
    position = {p.id: i for i, p in enumerate(ordered)}
    ordered = [
        p
        if p.role is not None
        else replace(
            p,
            role=Role.CONSEQUENCE,
            explained_by=tuple(
                sorted((q for q in suspects if p.id in edges[q]), key=position.__getitem__)
            ),
        )
        for p in ordered
    ]
    rest = sorted(
        (p for p in results if p.verdict is not Verdict.SUSPECT),
        key=lambda p: (VERDICT_RANK[p.verdict], strength(p)[1], p.id),
    )
    ordered += [
        replace(p, role=Role.UNKNOWN if p.verdict is Verdict.UNKNOWN else Role.CLEAR) for p in rest
    ]
    return tuple(ordered)


@dataclass(frozen=True, slots=True)
class Headline:
    """The diagnosis in one line: the probable cause (its title and place), since when,
    and the first direction; with no cause, the critical findings that still stand (no
    probable cause yet); or no incident.
    """

    cause: PathResult | None
    """The probable cause; None: no triage path is suspect."""
    explains: tuple[str, ...]
    """The consequences the cause explains, in order."""
    independent: tuple[str, ...]
    """The independent suspects, in order."""
    unknown: int
    """How many paths are unknown."""
    at: float | None
    """The snapshot's time (what ``N m ago`` counts from)."""
    paths: int = 0
    """How many paths were walked."""
    talker: str = ""
    """The client dominating the busiest priority level (empty: none does)."""
    named: str = ""
    """The culprit the cause's evidence names (``etcd-1 is defragmenting: ...``; empty:
    none)."""
    place: str = ""
    """Where the cause is (``zone us-east-1b``, ``member etcd-0:2379``: its evidence's
    worst subject, :func:`~.place.path_place`; empty: its evidence names no place)."""
    critical: tuple[Finding, ...] = ()
    """The critical findings of the same snapshot."""

    @property
    def unexplained(self) -> bool:
        """True when critical findings stand and no triage path is suspect: an incident
        with no probable cause yet, never "no incident".
        """
        return self.cause is None and bool(self.critical)

    @property
    def no_verdict(self) -> bool:
        """True when no path could be judged: every one is unknown (nothing read yet, or
        nothing readable) and no critical finding stands; that is not "no incident".
        """
        return not self.unexplained and self.cause is None and self.unknown == self.paths > 0

    def critical_count(self) -> str:
        """``2 critical findings``."""
        n = len(self.critical)
        return f"{n} critical finding{'' if n == 1 else 's'}"

    def named_cause(self) -> str:
        """``Many nodes NotReady at once: zone us-east-1b``: the cause's title and place
        (empty without a cause).
        """
        if self.cause is None:
            return ""
        return f"{self.cause.title}: {self.place}" if self.place else self.cause.title

    def since(self) -> str:
        """``since 12:03:10 (4m ago), getting worse``; empty without a history."""
        t = None if self.cause is None else self.cause.trend
        if t is None or t.since is None or self.at is None:
            return ""
        words = since_words(t, self.at)
        if t.direction is Direction.UNKNOWN:
            return words
        return f"{words}, {DIRECTION_WORDS[t.direction]}"

    def _unknown_words(self) -> str:
        return f" ({self.unknown} paths unknown)" if self.unknown else ""

    def text(self) -> str:
        """The whole line in words."""
        if self.unexplained:
            first = self.critical[0]
            more = len(self.critical) - 1
            return (
                f"No probable cause yet: {self.critical_count()}: {first.code} {first.title}"
                + (f" and {more} more" if more else "")
                + f"; no triage path is suspect{self._unknown_words()}"
            )
        if self.no_verdict:
            return f"No verdict: all {self.paths} triage paths are unknown (evidence not read)"
        if self.cause is None:
            return f"No incident: no triage path is suspect{self._unknown_words()}"
        c = self.cause
        out = f"Probable cause: {c.id} {self.named_cause()}"
        if self.named:
            out += f" ({self.named})"
        if since := self.since():
            out += f", {since}"
        out += f"; first direction: {c.direction}"
        if self.explains:
            out += f"; explains {', '.join(self.explains)}"
        if self.independent:
            out += f"; also suspect: {', '.join(self.independent)}"
        if self.talker:
            out += f"; top talker: {self.talker}"
        return out


def headline(report: TriageReport) -> Headline:
    """The report's diagnosis in one line."""
    explained: list[str] = []
    for p in report.paths[1:]:  # the cause's consequences come right after it
        if p.role is not Role.CONSEQUENCE:
            break
        explained.append(p.id)
    cause = report.cause
    return Headline(
        cause,
        tuple(explained) if cause is not None else (),
        tuple(p.id for p in report.independent),
        sum(1 for p in report.paths if p.verdict is Verdict.UNKNOWN),
        report.at,
        len(report.paths),
        report.talker if cause is not None else "",
        report.named if cause is not None else "",
        path_place(cause) if cause is not None else "",
        report.critical,
    )
