"""Where a path's problem is: the zone, etcd member, apiserver instance or priority level
its evidence points at, read from the history key of its worst evidence's signal (the
subject the reading graded worst). Pure.
"""

from __future__ import annotations

from ktop.analysis.triage.types import STATUS_RANK, Evidence, PathResult, Status
from ktop.model.events import Area
from ktop.model.reading import split_key
from ktop.model.signals import BY_METRIC

PLACE_WORDS: dict[tuple[str, Area], str] = {
    ("zone", Area.NODES): "zone",
    ("instance", Area.ETCD): "member",
    ("instance", Area.APISERVERS): "instance",
    ("priority_level", Area.APF): "priority level",
}
"""The readings' subject labels that name a place, by area, and how the place reads
(``zone us-east-1b``, ``member etcd-0:2379``); other subjects (a scheduler queue, a
reason) are not places."""


def evidence_place(e: Evidence) -> str:
    """``zone us-east-1b``: the place of the subject ``e``'s signal is about; empty when
    the evidence has no signal, its signal is cluster-wide, or its subject is no place.
    """
    metric, subject = split_key(e.signal)
    reading = BY_METRIC.get(metric)
    if not subject or reading is None or reading.area is None:
        return ""
    word = PLACE_WORDS.get((reading.subject_label, reading.area))
    return f"{word} {subject}" if word else ""


def path_place(path: PathResult) -> str:
    """The place of the path's problem: that of its first suspect evidence naming one,
    else of its worst warn or bad evidence naming one (in the path's order); empty when
    none names a place.
    """
    breaching = [e for e in path.evidence if e.status in (Status.WARN, Status.BAD)]
    chosen = [e for e in path.evidence if e.suspect] + sorted(
        breaching, key=lambda e: STATUS_RANK[e.status]
    )
    return next((place for e in chosen if (place := evidence_place(e))), "")
