"""Findings: the strip on the overview and the full list with evidence."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from ktop.analysis.findings import Finding, Severity
from ktop.analysis.trends import DIRECTION_WORDS, Direction, Trend, since_words
from ktop.model.text import truncate
from ktop.ui.render.level import CRITICAL_COUNT_STYLE, SEVERITY_LEVEL, SEVERITY_SYMBOL, STYLE

NO_HISTORY = "no history for this finding"
"""Said of a finding whose reading has no signal history (a count over the window,
a state, a quota): it has no start and no direction to show."""
SEVERITY_ORDER = (Severity.CRITICAL, Severity.WARNING, Severity.UNKNOWN, Severity.INFO)
"""Severities in the order counts and lists show them (OK findings are not listed)."""


def ranked(findings: Sequence[Finding]) -> list[Finding]:
    """Findings worse than OK, worst first, then by code, then by what each is about (its
    signal names the level, instance or zone) and its title: a fixed order, whatever
    order the rules found them in.
    """
    shown = [f for f in findings if f.severity > Severity.OK]
    return sorted(shown, key=lambda f: (-f.severity, f.code, f.signal, f.title))


def matches(f: Finding, needle: str) -> bool:
    """Whether ``needle`` (any case) is in the finding's code, area, severity, title or
    evidence; an empty needle matches every finding.
    """
    if not needle:
        return True
    text = " ".join((f.code, f.area.value, f.severity.name, f.title, *f.evidence))
    return needle.lower() in text.lower()


def counts(findings: Sequence[Finding]) -> Text:
    """``✖2 ▲3 ?1 i4`` (only severities present); ``✓ 0`` when there are none."""
    out = Text()
    for sev in SEVERITY_ORDER:
        n = sum(1 for f in findings if f.severity == sev)
        if n:
            if out:
                out.append(" ")
            style = CRITICAL_COUNT_STYLE if sev is Severity.CRITICAL else STYLE[SEVERITY_LEVEL[sev]]
            out.append(f"{SEVERITY_SYMBOL[sev]}{n}", style=style)
    return out or Text("✓ no findings", style=STYLE[SEVERITY_LEVEL[Severity.OK]])


def finding_line(f: Finding, width: int) -> Text:
    """``✖ KT-ETCD-002 WAL fsync p99 612 ms on etcd-1 (>500 ms)``."""
    style = STYLE[SEVERITY_LEVEL[f.severity]]
    out = Text(f"{SEVERITY_SYMBOL[f.severity]} {f.code} ", style=style)
    out.append(truncate(f.title, max(4, width - len(out))))
    return out


def strip_lines(findings: Sequence[Finding], rows: int, width: int) -> tuple[Text, ...]:
    """The top findings that fit ``rows`` lines; the last line says how many more."""
    top = ranked(findings)
    if not top:
        return (Text("✓ no findings", style=STYLE[SEVERITY_LEVEL[Severity.OK]]),)
    rows = max(1, rows)
    if len(top) <= rows:
        return tuple(finding_line(f, width) for f in top)
    more = Text(f"  +{len(top) - rows + 1} more — press f for all", style="dim")
    if rows == 1:
        first = finding_line(top[0], max(4, width - 16))
        first.append(f"  (+{len(top) - 1}, f)", style="dim")
        return (first,)
    return (*(finding_line(f, width) for f in top[: rows - 1]), more)


DIRECTION_STYLE: dict[Direction, str] = {
    Direction.WORSE: "bold red",
    Direction.BETTER: "green",
    Direction.STEADY: "",
    Direction.UNKNOWN: "dim",
}


def styled_trend(t: Trend, now: float) -> Text:
    """``since 12:03:10 (4m ago), getting worse`` with the direction styled (words too:
    never colour alone).
    """
    out = Text(since_words(t, now) + ", ")
    out.append(DIRECTION_WORDS[t.direction], style=DIRECTION_STYLE[t.direction])
    return out


def trend_text(f: Finding, now: float) -> Text | None:
    """``since 12:03:10 (4m ago), getting worse``; None for findings without a signal."""
    return None if f.trend is None else styled_trend(f.trend, now)


def finding_block(f: Finding, now: float) -> Text:
    """One finding: severity, code, area and title, since when and which way it goes
    (``now`` is the snapshot's time), and its evidence, one line each.
    """
    out = Text()
    style = STYLE[SEVERITY_LEVEL[f.severity]]
    out.append(f"{SEVERITY_SYMBOL[f.severity]} {f.severity.name:<8} {f.code}", style=style)
    out.append(f"  [{f.area.value}]  ", style="dim")
    out.append(f.title + "\n", style="bold")
    out.append("      ")
    out.append_text(trend_text(f, now) or Text(NO_HISTORY, style="dim"))
    for evidence in f.evidence:
        out.append(f"\n      · {evidence}")
    return out


NO_FINDINGS = "✓ no findings: nothing in the catalogue matched this snapshot."


def full_text(findings: Sequence[Finding], now: float) -> Text:
    """Every finding with its area, since when and which way it goes (``now`` is the
    snapshot's time), and its evidence.
    """
    top = ranked(findings)
    if not top:
        return Text(NO_FINDINGS)
    return Text("\n").join(finding_block(f, now) + Text("\n") for f in top)
