"""``ktop triage`` as plain text and as Markdown (pure): the diagnosis' line first, then
each path in the diagnosis' order with its evidence; the marks and words of each role
are the triage screen's too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ktop.analysis.trends import Trend, describe
from ktop.analysis.triage.diagnosis import explained_words, headline
from ktop.analysis.triage.report import role_of
from ktop.analysis.triage.timeline import KIND_WORD, TimelineEvent
from ktop.analysis.triage.types import Capacity, Evidence, PathResult, Role, TriageReport
from ktop.model.events import Area
from ktop.model.text import fmt_sig
from ktop.ui.render.level import SEVERITY_SYMBOL
from ktop.ui.render.timeline import NO_EVENTS, plain_line, when


def evidence_value(e: Evidence) -> str:
    """An evidence's value as every triage view writes it: ``?`` when unknown, a ratio as
    a percentage, a number to four significant digits with its unit (``∞`` as any other).
    """
    if e.value is None:
        return "?"
    unit = "" if e.unit in ("count", "ratio", "") else f" {e.unit}"
    if e.unit == "ratio" and math.isfinite(e.value):
        return f"{e.value * 100:.0f} %"
    return f"{fmt_sig(e.value)}{unit}"


def _since(t: Trend | None, at: float | None) -> str:
    """``since 12:03:10 (4m ago), getting worse``; empty without a trend."""
    return "" if t is None or at is None else describe(t, at)


MARK = {"suspect": "✖", "unknown": "?", "clear": "✓", "bad": "✖", "warn": "▲", "ok": "✓"}
NOTE_MARK = "i"
"""An ``ok`` reading that is a note (it passed an informational limit): never a ✓."""
ROLE_MARK = {
    Role.CAUSE: "✖",
    Role.INDEPENDENT: "✖",
    Role.CONSEQUENCE: "↳",
    Role.UNKNOWN: "?",
    Role.CLEAR: "✓",
}
ROLE_WORD = {
    Role.CAUSE: "cause",
    Role.INDEPENDENT: "suspect",
    Role.CONSEQUENCE: "explained",
    Role.UNKNOWN: "unknown",
    Role.CLEAR: "clear",
}
"""How each role reads in text, Markdown and on screen: a consequence is 'explained'
(by its cause), never 'suspect' on its own; an independent suspect is 'suspect'."""


def _mark(e: Evidence) -> str:
    return NOTE_MARK if e.note else MARK[e.status.value]


def _status(e: Evidence) -> str:
    return f"{e.status.value} (note)" if e.note else e.status.value


Files = Mapping[Area, Sequence[str]]
"""Per pane, the files of a bundle whose contents feed it (empty for other sources)."""


def read_from(p: PathResult, files: Files) -> list[str]:
    """The files the evidence of path ``p`` rests on: those of its evidence's panes."""
    panes = {e.pane for e in p.evidence if e.pane is not None}
    return list(dict.fromkeys(f for area in Area if area in panes for f in files.get(area, ())))


def to_text(
    report: TriageReport,
    errors: Sequence[str] = (),
    timeline: Sequence[TimelineEvent] = (),
    look_back: str = "",
    provider: str = "",
    files: Files | None = None,
) -> str:
    """Plain text: the diagnosis' line, then the cause, its consequences and any
    independent suspect with their evidence (and, for a bundle, the ``files`` it rests
    on), then the other verdicts, then the incident timeline; ``look_back`` (a live
    one-shot's) says how much of the past was judged.
    """
    out: list[str] = [headline(report).text(), ""]
    for p in report.paths:
        role = role_of(p)
        out.append(f"{ROLE_MARK[role]} {p.id:<10} {ROLE_WORD[role]:<9} {p.title}")
        if role is Role.CONSEQUENCE:
            out.append(f"    {explained_words(p)}")
        out.append(f"    {p.conclusion}")
        if since := _since(p.trend, report.at):
            out.append(f"    {since}")
        if role in (Role.CAUSE, Role.INDEPENDENT):
            out.append(f"    first direction: {p.direction}")
        if p.verdict.value == "suspect":
            for e in p.evidence:
                first = "*" if e.first_line else " "
                out.append(f"    {first}{_mark(e)} {e.title}: {evidence_value(e)} ({e.detail})")
                if e.breaching and (since := _since(e.trend, report.at)):
                    out.append(f"        {since}")
            if read := read_from(p, files or {}):
                out.append(f"    read from: {', '.join(read)}")
    out.append("")
    out.append("timeline (oldest first):")
    now = report.at if report.at is not None else max((e.at for e in timeline), default=0.0)
    out += [f"    {plain_line(e, now)}" for e in timeline] or [f"    {NO_EVENTS}"]
    out.append("")
    out.append("capacity:")
    for c in report.capacity:
        out.append(f"    {c.title}: {_capacity_value(c)} ({c.detail})")
    if provider:
        out.append(f"provider: {provider}")
    if look_back:
        out.append(f"look-back: {look_back}")
    out.append(f"baseline: {report.baseline}")
    for err in errors:
        out.append(f"error: {err}")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(
    report: TriageReport,
    errors: Sequence[str] = (),
    timeline: Sequence[TimelineEvent] = (),
    look_back: str = "",
    provider: str = "",
    files: Files | None = None,
) -> str:
    """Markdown: the diagnosis' line, a table of the paths in its order, each non-clear
    path's evidence, then the incident timeline (and ``look_back``, as :func:`to_text`).
    """
    out = [f"**{_md(headline(report).text())}**", "", "## ktop triage", ""]
    out += ["| path | role | since | conclusion |", "|---|---|---|---|"]
    for p in report.paths:
        role = role_of(p)
        said = p.conclusion
        if role is Role.CONSEQUENCE:
            said = f"{explained_words(p)}; {said}"
        out.append(
            f"| {p.id} {_md(p.title)} | {ROLE_WORD[role]} | "
            f"{_md(_since(p.trend, report.at))} | {_md(said)} |"
        )
    for p in report.paths:
        role = role_of(p)
        if role is Role.CLEAR:
            continue
        out += ["", f"### {p.id}: {_md(p.title)} ({ROLE_WORD[role]})", ""]
        if role is Role.CONSEQUENCE:
            words = _md(explained_words(p))
            out += [f"{words[:1].upper()}{words[1:]}.", ""]
        out += [f"First direction: {_md(p.direction)}", ""]
        out += ["| evidence | status | value | since | detail |", "|---|---|---|---|---|"]
        out += [
            f"| {_md(e.title)}{' (first line)' if e.first_line else ''} | {_status(e)} | "
            f"{_md(evidence_value(e))} | "
            f"{_md(_since(e.trend, report.at) if e.breaching else '')} | "
            f"{_md(e.detail)} |"
            for e in p.evidence
        ]
        if read := read_from(p, files or {}):
            out += ["", f"Read from: {_md(', '.join(read))}"]
    out += ["", "## Timeline", ""]
    now = report.at if report.at is not None else max((e.at for e in timeline), default=0.0)
    out += (
        [
            "| when | kind | what |",
            "|---|---|---|",
            *(
                f"| {when(e, now)} | {KIND_WORD[e.kind]} | "
                f"{SEVERITY_SYMBOL[e.severity]} {_md(e.line)} |"
                for e in timeline
            ),
        ]
        if timeline
        else [NO_EVENTS]
    )
    out += ["", "## Capacity", ""]
    out += [f"- {c.title}: {_capacity_value(c)} ({_md(c.detail)})" for c in report.capacity]
    if provider:
        out += ["", f"Provider: {_md(provider)}"]
    if look_back:
        out += ["", f"Look-back: {_md(look_back)}"]
    out += ["", f"Baseline: {_md(report.baseline)}"]
    if errors:
        out += ["", "## Errors", ""] + [f"- {_md(e)}" for e in errors]
    return "\n".join(out) + "\n"


def _capacity_value(c: Capacity) -> str:
    """A capacity figure and its unit, ``?`` when unknown."""
    return "?" if c.value is None else f"{fmt_sig(c.value)} {c.unit}"
