"""``ktop triage``: every triage path's verdict, for a live cluster or an offline bundle.

Exit code 0 when no path is suspect, 1 when any is, 2 on error, so that it can
gate a rollout. ``--output`` is ``text``, ``json`` (``docs/triage-json.md``)
or ``markdown``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from ktop import bounds
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.report import to_json, to_markdown, to_text
from ktop.bounds import bounded_float
from ktop.model.scrub import scrub

if TYPE_CHECKING:
    from ktop.sampling import Sampled

EXIT_CLEAR, EXIT_SUSPECT, EXIT_ERROR = 0, 1, 2
DEFAULT_WINDOW_S = 15.0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``ktop triage``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "triage",
        help="report every triage path's verdict (exit 1 when any is suspect)",
        description=(
            "Walk every triage path (docs/triage.md) on a live cluster or an offline bundle "
            "and report the verdicts. Exit code: 0 no path suspect, 1 some path suspect, "
            "2 error."
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
    p.add_argument(
        "--output", choices=("text", "json", "markdown"), default="text", help="report format"
    )
    return p


def render(sampled: Sampled, output: str) -> tuple[str, int]:
    """The report in the chosen format and the exit code."""
    report = triage(sampled.snapshot, sampled.baseline, sampled.capacity)
    if output == "json":
        doc = to_json(
            report,
            sampled.snapshot,
            source=sampled.source,
            errors=sampled.errors,
            windows=sampled.windows,
        )
        text = json.dumps(doc, indent=2, sort_keys=False) + "\n"
    elif output == "markdown":
        text = to_markdown(report, sampled.errors)
    else:
        text = to_text(report, sampled.errors)
    return text, EXIT_SUSPECT if report.suspects else EXIT_CLEAR


def run(args: argparse.Namespace) -> int:
    """Run ``ktop triage``."""
    given = [name for name, v in (("--bundle", args.bundle), ("--recording", args.recording),
                                   ("--context", args.context)) if v]  # fmt: skip
    if len(given) > 1:
        print(f"ktop triage: {' and '.join(given)} cannot be combined", file=sys.stderr)
        return EXIT_ERROR
    if args.at and not args.recording:
        print("ktop triage: --at goes with --recording", file=sys.stderr)
        return EXIT_ERROR
    from ktop.compose import SourceError
    from ktop.record.format import FormatError
    from ktop.sampling import from_bundle, from_recording, sample_live

    try:
        if args.recording:
            sampled = from_recording(args.recording, args.at)
        elif args.bundle:
            sampled = asyncio.run(from_bundle(args.bundle, args.rack_label))
        else:
            sampled = asyncio.run(sample_live(args, args.context, args.window))
    except SourceError as exc:  # already scrubbed
        print(f"ktop triage: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except (FormatError, OSError, RuntimeError, ValueError) as exc:
        print(f"ktop triage: {scrub(exc)}", file=sys.stderr)
        return EXIT_ERROR
    text, code = render(sampled, args.output)
    sys.stdout.write(text)
    for err in sampled.errors:
        print(f"ktop triage: {err}", file=sys.stderr)
    return code
