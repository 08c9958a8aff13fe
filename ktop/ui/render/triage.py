"""Triage paths and their evidence as tables (most severe first), for the triage screen."""

from __future__ import annotations

from rich.text import Text

from ktop.analysis.trends import Direction, Trend, compact, since_words
from ktop.analysis.triage.diagnosis import Headline, explained_words
from ktop.analysis.triage.diagnosis import headline as diagnosis_headline
from ktop.analysis.triage.report import role_of
from ktop.analysis.triage.types import PathResult, Role, Status, TriageReport, Verdict
from ktop.model.text import truncate
from ktop.ui.render.findings import DIRECTION_STYLE, styled_trend
from ktop.ui.render.level import STYLE, SYMBOL, Level
from ktop.ui.render.triage_text import ROLE_MARK, ROLE_WORD, evidence_value
from ktop.ui.render.view import Column, Row, TableSpec

SINCE_WIDTH = 16
"""``<12:03:10 steady``."""
VERDICT_LEVEL = {
    Verdict.SUSPECT: Level.CRIT,
    Verdict.UNKNOWN: Level.UNKNOWN,
    Verdict.CLEAR: Level.OK,
}
ROLE_LEVEL = {
    Role.CAUSE: Level.CRIT,
    Role.INDEPENDENT: Level.CRIT,
    Role.CONSEQUENCE: Level.WARN,
    Role.UNKNOWN: Level.UNKNOWN,
    Role.CLEAR: Level.OK,
}
"""A consequence is explained by its cause: a warning, never a second critical."""
STATUS_LEVEL = {
    Status.BAD: Level.CRIT,
    Status.WARN: Level.WARN,
    Status.UNKNOWN: Level.UNKNOWN,
    Status.OK: Level.OK,
}


def since_cell(t: Trend | None) -> Text:
    """``12:03:10 worse``: when the problem began and which way it goes; ``-`` without
    a history (the direction is in words, its colour only repeats them).
    """
    if t is None:
        return Text("-", style="dim")
    out = Text(compact(t))
    if t.since is not None and t.direction is not Direction.UNKNOWN:
        start = len(out.plain) - len(t.direction.value)
        out.stylize(DIRECTION_STYLE[t.direction], max(0, start))
    return out


def path_since(path: PathResult, now: float | None) -> Text | None:
    """``since 12:03:10 (4m ago), getting worse`` for a path with a history, else None."""
    t = path.trend
    return None if t is None or now is None else styled_trend(t, now)


def role_cell(p: PathResult) -> Text:
    """``✖ cause``, ``↳ explained``, ``✖ suspect`` (independent), ``? unknown``, ``✓ clear``."""
    role = role_of(p)
    level = ROLE_LEVEL[role]
    mark = ROLE_MARK[role] if role is Role.CONSEQUENCE else SYMBOL[level]
    return Text(f"{mark} {ROLE_WORD[role]}", style=STYLE[level])


CELL_PADDING = 2
"""Cells a table column spends on padding (one each side)."""
SYMPTOM_MIN = 12


def text_widths(titles: list[str], width: int, fixed: int) -> tuple[int | None, int | None]:
    """The symptom and conclusion columns' widths at ``width`` columns, the other columns
    taking ``fixed`` cells: where to look first (what an operator reads) keeps at least
    half the room; the symptom is as wide as its longest title when the other half
    holds it, and where to look first takes the rest. ``(None, None)`` when the width is
    unknown.
    """
    if width <= 0:
        return None, None
    room = max(0, width - fixed - 2 * CELL_PADDING)
    longest = max((len(t) for t in titles), default=SYMPTOM_MIN)
    floor = max(SYMPTOM_MIN, room // 2)
    symptom = max(SYMPTOM_MIN, min(longest, room - floor))
    return symptom, max(SYMPTOM_MIN, room - symptom)


def paths_table(report: TriageReport, width: int = 0) -> TableSpec:
    """Every path with its role and conclusion, in the diagnosis' order: the probable
    cause, the consequences it explains (each saying what explains it), independent
    suspects, then unknown and clear paths.
    """
    rows = []
    for p in report.paths:
        said = Text(p.conclusion, style="dim" if p.verdict is Verdict.CLEAR else "")
        if p.explained_by:
            said = Text.assemble((explained_words(p), "bold"), "; ", said)
        rows.append(
            Row(
                p.id,
                (role_cell(p), Text(p.id, style="bold"), since_cell(p.trend), Text(p.title), said),
            )
        )
    fixed = 11 + 10 + SINCE_WIDTH + 3 * CELL_PADDING + 2  # and the scrollbar
    symptom, conclusion = text_widths([p.title for p in report.paths], width, fixed)
    return TableSpec(
        "paths",
        "Triage paths (enter: evidence)",
        (
            Column("verdict", "diagnosis", 11),
            Column("id", "path", 10),
            Column("since", "since", SINCE_WIDTH),
            Column("title", "symptom", symptom or 28),
            Column("conclusion", "where to look first", conclusion),
        ),
        tuple(rows),
    )


def evidence_table(path: PathResult) -> TableSpec:
    """A path's evidence in order, with values, units and the pane that shows each."""
    rows = []
    for i, e in enumerate(path.evidence):
        level = STATUS_LEVEL[e.status]
        rows.append(
            Row(
                f"{i}:{e.id}",
                (
                    Text(f"{SYMBOL[level]} {e.status.value}", style=STYLE[level]),
                    Text(("* " if e.first_line else "  ") + e.title),
                    Text(evidence_value(e), justify="right"),
                    since_cell(e.trend if e.breaching else None),
                    Text(e.pane.value if e.pane else "-", style="dim"),
                    Text(e.detail),
                ),
            )
        )
    return TableSpec(
        "evidence",
        f"{path.id} {path.title}: evidence (* first line; enter jumps to its pane)",
        (
            Column("status", "status", 9),
            Column("title", "evidence", 40),
            Column("value", "value", 10),
            Column("since", "since", SINCE_WIDTH),
            Column("pane", "pane", 10),
            Column("detail", "detail"),
        ),
        tuple(rows),
    )


def headline(report: TriageReport) -> Text:
    """One line: the probable cause (its title and place, since when), its conclusion,
    what it explains and any independent suspect; with no cause, the critical findings
    that stand (no probable cause yet); or no incident (the diagnosis'
    :class:`~.diagnosis.Headline`, styled).
    """
    line = diagnosis_headline(report)
    first = line.cause
    if first is None:
        return _without_cause(line)
    out = Text(f"{SYMBOL[Level.CRIT]} Probable cause: ", style=STYLE[Level.CRIT])
    out.append(f"{first.id} {line.named_cause()}")
    if (since := path_since(first, report.at)) is not None:
        out.append(" (")
        out.append_text(since)
        out.append(")")
    out.append(f": {first.conclusion}")
    if line.explains:
        out.append(f"; explains {', '.join(line.explains)}", style="dim")
    if line.independent:
        out.append(f"; also suspect: {', '.join(line.independent)}", style=STYLE[Level.CRIT])
    return out


def _without_cause(line: Headline) -> Text:
    """The headline with no probable cause: critical findings (no probable cause yet),
    no verdict, or no incident, each in its level's style.
    """
    level = Level.CRIT if line.unexplained else Level.UNKNOWN if line.no_verdict else Level.OK
    return Text(f"{SYMBOL[level]} {line.text()}", style=STYLE[level])


HEADLINE_TITLE_MIN = 8
"""A narrow headline cuts the cause's title no shorter than this (its place is kept)."""
DOT = " · "
FIRST_MIN = len(f"{DOT}first: …")
"""A cut first direction keeps at least its word (``· first: …``)."""


def headline_bar(report: TriageReport, width: int, findings_key: str = "") -> Text:
    """The diagnosis as the first line of every screen, fitted to ``width``: the probable
    cause by its title and place, since when (time and how long ago) and the first
    direction; with no cause, how many critical findings stand and the key that lists
    them (``findings_key``, empty: none); or no incident.

    When the diagnosis' whole line fits (the words of ``ktop snapshot`` and ``ktop
    triage``, :class:`~ktop.analysis.triage.diagnosis.Headline`) it is shown as it is;
    when it does not, the least important parts go first (the path's id and what else is
    suspect, then the first direction, cut; since when shows whole or not at all), never
    the cause's title and place.
    """
    line = diagnosis_headline(report)
    cause = line.cause
    if line.unexplained:
        return _unexplained_bar(line, width, findings_key)
    if cause is None:
        return _fit(_without_cause(line), width)
    mark = f"{SYMBOL[Level.CRIT]} "
    whole = Text(mark + "Probable cause: ", style=STYLE[Level.CRIT])
    whole.append(f"{cause.id} {line.named_cause()}", style="bold")
    whole.append(line.text().removeprefix(f"Probable cause: {cause.id} {line.named_cause()}"))
    if whole.cell_len <= width:
        return whole
    since = "" if cause.trend is None or report.at is None else since_words(cause.trend, report.at)
    place = f": {line.place}" if line.place else ""
    title_room = width - len(mark) - len(place)
    narrow = Text(mark, style=STYLE[Level.CRIT])
    narrow.append(truncate(cause.title, max(HEADLINE_TITLE_MIN, title_room)), style="bold")
    narrow.append(place, style="bold")
    since_part = f"{DOT}{since}" if since else ""
    first_part = f"{DOT}first: {cause.direction}"
    # since when shows whole or not at all; the first direction takes the room left, cut
    for part, least in ((since_part, len(since_part)), (first_part, FIRST_MIN)):
        room = width - narrow.cell_len
        if room >= min(len(part), least):
            narrow.append(truncate(part, room))
    return _fit(narrow, width)


def _unexplained_bar(line: Headline, width: int, findings_key: str) -> Text:
    """``✖ No probable cause yet: 2 critical findings, press f · KT-NODE-004 lease lag
    p99 54s ...``: styled as critical, the first finding in the room that is left.
    """
    out = Text(
        f"{SYMBOL[Level.CRIT]} No probable cause yet: {line.critical_count()}",
        style=STYLE[Level.CRIT],
    )
    if findings_key:
        out.append(f", press {findings_key}")
    first = line.critical[0]
    rest = width - out.cell_len - len(DOT)
    if rest >= HEADLINE_TITLE_MIN:
        out.append(DOT + truncate(f"{first.code} {first.title}", rest))
    return _fit(out, width)


def _fit(text: Text, width: int) -> Text:
    if text.cell_len > width:
        text.truncate(max(width - 1, 0))
        text.append("…")
    return text
