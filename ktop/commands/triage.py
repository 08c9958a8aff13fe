"""``ktop triage``: the probable cause and every triage path's verdict, for a live cluster,
an offline bundle or a recording.

Exit code 0 when there is no incident, 1 when there is a probable cause (or an
independent suspect, or a critical finding with no probable cause yet), 2 on error, so
that it can gate a rollout. ``--output`` is
``text``, ``json`` (``docs/triage-json.md``) or ``markdown``. With ``json``, an error
that stops triage is a JSON document on standard output too (and on standard error in
words), so that a script can read it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ktop import bounds
from ktop.analysis.triage.report import error_json, to_json
from ktop.bounds import bounded_float
from ktop.commands.options import look_back_option, look_back_s, look_back_words
from ktop.commands.triage_audit import add_audit_options, audit_misuse, read_audit
from ktop.model.providers import provider_words
from ktop.printable import printable
from ktop.scrub import Secrets
from ktop.ui.render.audit_text import audit_markdown, audit_text
from ktop.ui.render.triage_text import to_markdown, to_text

if TYPE_CHECKING:
    from ktop.sampling import Sampled

EXIT_CLEAR, EXIT_SUSPECT, EXIT_ERROR = 0, 1, 2
DEFAULT_WINDOW_S = 15.0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``ktop triage``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "triage",
        help="name the probable cause and every triage path's verdict (exit 1 on an incident)",
        description=(
            "Walk every triage path (docs/triage.md) on a live cluster or an offline bundle "
            "and report the diagnosis: the probable cause, the consequences it explains, "
            "independent suspects, then the other verdicts. Exit code: 0 no incident, 1 a "
            "probable cause (or an independent suspect, or a critical finding with no "
            "probable cause yet), 2 error."
        ),
    )
    p.add_argument(
        "--bundle",
        metavar="DIR",
        help="an offline bundle (docs/bundle-format.md); without it, the live cluster of "
        "--context (default: the current context) is sampled",
    )
    p.add_argument(
        "--recording",
        metavar="FILE",
        help="a recording made by 'ktop record' or the app (docs/recording-format.md)",
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="with --recording: the moment to triage (HH:MM[:SS] UTC, +SECONDS from the "
        "start, or Unix seconds; default the end)",
    )
    p.add_argument(
        "--window",
        type=bounded_float(bounds.TRIAGE_WINDOW),
        default=DEFAULT_WINDOW_S,
        metavar="SECONDS",
        help=f"live sampling window, {bounds.TRIAGE_WINDOW.text()} (default {DEFAULT_WINDOW_S:g})",
    )
    look_back_option(p)
    add_audit_options(p)
    p.add_argument(
        "--output", choices=("text", "json", "markdown"), default="text", help="report format"
    )
    return p


def render(sampled: Sampled, output: str) -> tuple[str, int]:
    """The report in the chosen format and the exit code: the triage report and incident
    timeline of the published snapshot.
    """
    report, timeline = sampled.published.triage, sampled.published.timeline
    look_back = look_back_words(sampled.source)  # a live one-shot's or a bundle's
    snap = sampled.published.snapshot
    provider = provider_words(snap.provider, snap.provider_because)
    audit = sampled.published.audit
    if output == "json":
        doc = to_json(
            report,
            sampled.published.snapshot,
            source=sampled.source,
            errors=sampled.errors,
            windows=sampled.windows,
            timeline=timeline,
            audit=audit,
            files=sampled.files,
        )
        text = json.dumps(doc, indent=2, sort_keys=False) + "\n"
    elif output == "markdown":  # names and messages come from the input: no control characters
        md = to_markdown(report, sampled.errors, timeline, look_back, provider, sampled.files)
        md += audit_markdown(audit) if audit is not None else ""
        text = printable(md, newlines=True)
    else:
        plain = to_text(report, sampled.errors, timeline, look_back, provider, sampled.files)
        plain += audit_text(audit) if audit is not None else ""
        text = printable(plain, newlines=True)
    # an independent suspect and explained consequences always come with a probable cause
    return text, EXIT_SUSPECT if report.incident else EXIT_CLEAR


def _asked(args: argparse.Namespace, given: list[str]) -> dict[str, Any]:
    """What was asked for, as the report's ``source`` names it (empty when it conflicts)."""
    if len(given) > 1:
        return {}
    if args.recording:
        return {"kind": "recording", "path": args.recording}
    if args.bundle:
        return {"kind": "bundle", "path": args.bundle}
    if args.audit_log and not args.context:
        return {"kind": "audit-log", "paths": list(args.audit_log)}
    return {"kind": "live", "context": args.context}


def _fail(args: argparse.Namespace, source: dict[str, Any], message: str) -> int:
    """Say why triage stopped (standard error; a JSON document too with ``--output json``)."""
    print(printable(f"ktop triage: {message}"), file=sys.stderr)
    if args.output == "json":
        sys.stdout.write(json.dumps(error_json(message, source), indent=2) + "\n")
    return EXIT_ERROR


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Run ``ktop triage``."""
    given = [name for name, v in (("--bundle", args.bundle), ("--recording", args.recording),
                                   ("--context", args.context)) if v]  # fmt: skip
    source = _asked(args, given)
    if len(given) > 1:
        return _fail(args, source, f"{' and '.join(given)} cannot be combined")
    if args.at and not args.recording:
        return _fail(args, source, "--at goes with --recording")
    if args.look_back is not None and args.recording:
        return _fail(args, source, "--look-back goes with a live cluster or a bundle")
    if misuse := audit_misuse(args):
        return _fail(args, source, misuse)
    from ktop.compose import SourceError
    from ktop.record.format import FormatError
    from ktop.sampling import audit_only, from_bundle, from_recording, sample_live
    from ktop.sources.audit_log import AuditInputError
    from ktop.structured import InputRefusedError

    try:
        audit = read_audit(args, secrets) if args.audit_log else None
    except (AuditInputError, InputRefusedError, OSError) as exc:
        return _fail(args, source, f"--audit-log: {secrets.scrub(exc)}")
    try:
        if audit is not None and not given:
            sampled = audit_only(audit, secrets)
        elif args.recording:
            sampled = from_recording(args.recording, args.at, secrets)
        elif args.bundle:
            sampled = asyncio.run(
                from_bundle(args.bundle, args.rack_label, secrets, look_back_s(args))
            )
        else:
            sampled = asyncio.run(
                sample_live(args, args.context, args.window, secrets, look_back_s(args))
            )
    except SourceError as exc:  # already scrubbed
        return _fail(args, source, str(exc))
    except (FormatError, OSError, RuntimeError, ValueError) as exc:
        return _fail(args, source, secrets.scrub(exc))
    if audit is not None:
        sampled.published = replace(sampled.published, audit=audit)
    text, code = render(sampled, args.output)
    sys.stdout.write(text)
    for err in sampled.errors:
        print(printable(f"ktop triage: {err}"), file=sys.stderr)
    return code
