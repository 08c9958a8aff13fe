"""The audit logs' digest as text and Markdown (``ktop triage --audit-log``): the busiest
clients over the window, the busiest clients of its worst minutes, and what could not be
read.
"""

from __future__ import annotations

import time

from ktop.analysis.triage.evidence_audit import minute_words
from ktop.model.audit_digest import AuditDigest, ClientRow, MinuteRow

SHOWN_CLIENTS = 10
"""Clients in the text table (the JSON has every reported client)."""
_HEAD = ("requests", "peak/s", "429", "5xx", "p99", "APF level (flow schema)", "client")


def _when(t: float | None) -> str:
    return "?" if t is None else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def _cells(r: ClientRow) -> tuple[str, ...]:
    level = f"{r.priority_level} ({r.flow_schema})" if r.priority_level else "-"
    return (
        f"{r.requests:,}{'+' if r.at_least else ''}",
        f"{r.peak_per_s:.1f}",
        f"{r.rejected:,}",
        f"{r.server_errors:,}",
        "-" if r.latency_p99_s is None else f"<={r.latency_p99_s:.2g}s",
        level,
        r.sentence() + (f" [as, by {r.impersonated_by}]" if r.impersonated_by else ""),
    )


def _worst(d: AuditDigest) -> list[tuple[str, MinuteRow]]:
    out = []
    if (peak := d.peak) is not None:
        out.append(("busiest minute", peak))
    if (rej := d.peak_rejected) is not None and rej is not peak:
        out.append(("most 429s", rej))
    return out


def _summary(d: AuditDigest) -> list[str]:
    lines = [
        f"{d.requests:,} requests ({d.rejected:,} answered 429, {d.server_errors:,} 5xx) "
        f"from {_when(d.first)} to {_when(d.last)} in {len(d.files)} file(s)",
        f"APF levels from {d.classified_by}",
    ]
    skipped = [
        f"{n:,} {what}"
        for n, what in (
            (d.malformed, "malformed lines"),
            (d.outside, "requests outside --start/--end"),
            (
                d.dropped,
                "quiet clients dropped by the memory bound (counts marked + are lower bounds)",
            ),
        )
        if n
    ]
    if skipped:
        lines.append("not counted: " + ", ".join(skipped))
    if not d.requests and d.other_stages:
        lines.append(
            f"{d.other_stages:,} events at an earlier stage only: the audit policy omits "
            "ResponseComplete (omitStages), so no request could be counted"
        )
    return lines


def audit_text(d: AuditDigest) -> str:
    """The digest as plain text, a section to follow the triage report."""
    out = ["", "audit logs:"]
    out += [f"    {line}" for line in _summary(d)]
    rows = [_HEAD, *(_cells(r) for r in d.clients[:SHOWN_CLIENTS])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD) - 1)]
    for r in rows:
        out.append(
            "    " + "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1]
        )
    for label, m in _worst(d):
        out.append(
            f"    {label}: {minute_words(m.minute)}, {m.requests:,} requests, {m.rejected:,} 429"
        )
        for (user, agent, verb, resource), n, rej in m.top:
            agent_words = f" ({agent})" if agent else ""
            out.append(f"        {n:>7,} req {rej:>6,} 429  {user}{agent_words} {verb} {resource}")
    out += [f"    problem: {p}" for p in d.problems]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def audit_markdown(d: AuditDigest) -> str:
    """The digest as Markdown, a section to follow the triage report."""
    out = ["", "## Audit logs", ""]
    out += [f"- {_md(line)}" for line in _summary(d)]
    out += ["", "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    out += ["| " + " | ".join(_md(c) for c in _cells(r)) + " |" for r in d.clients[:SHOWN_CLIENTS]]
    for label, m in _worst(d):
        out += ["", f"### {label.capitalize()}: {minute_words(m.minute)}", ""]
        out += [f"{m.requests:,} requests, {m.rejected:,} answered 429.", ""]
        out += ["| requests | 429 | client |", "|---|---|---|"]
        for (user, agent, verb, resource), n, rej in m.top:
            agent_words = f" ({agent})" if agent else ""
            out.append(f"| {n:,} | {rej:,} | {_md(f'{user}{agent_words} {verb} {resource}')} |")
    if d.problems:
        out += ["", "### Audit log problems", ""] + [f"- {_md(p)}" for p in d.problems]
    return "\n".join(out) + "\n"
