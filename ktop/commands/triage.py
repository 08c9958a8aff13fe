"""``ktop triage``: every triage path's verdict, for a live cluster or an offline bundle.

Exit code 0 when no path is suspect, 1 when any is, 2 on error, so that it can
gate a rollout. ``--output`` is ``text``, ``json`` (``docs/triage-json.md``)
or ``markdown``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from ktop import bounds
from ktop.analysis.triage.baseline import BaselineSource, HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.report import to_json, to_markdown, to_text
from ktop.analysis.triage.types import Capacity
from ktop.bounds import bounded_float
from ktop.model.cluster import ClusterModel, ModelConfig
from ktop.model.scrub import scrub, scrub_event
from ktop.model.series import WINDOW_S
from ktop.model.snapshot import ClusterSnapshot

EXIT_CLEAR, EXIT_SUSPECT, EXIT_ERROR = 0, 1, 2
DEFAULT_WINDOW_S = 15.0
MIN_MODEL_WINDOW_S = WINDOW_S
RECORDING_STEP_S = 10.0
"""A recording is walked in steps this long, one history frame each, to build its baseline."""


@dataclass(slots=True)
class Sampled:
    """A snapshot to triage, with where it came from and what went wrong on the way."""

    snapshot: ClusterSnapshot
    source: dict[str, Any]
    errors: list[str] = field(default_factory=list)
    windows: dict[str, float | None] = field(default_factory=dict)
    baseline: BaselineSource | None = None
    """Where relative thresholds take the cluster's normal from (None: nowhere, a bundle)."""
    capacity: tuple[Capacity, ...] = ()


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


def from_bundle(directory: str, rack_label: str) -> Sampled:
    """Fold a bundle into one snapshot."""
    from ktop.sources.bundle.reader import read_bundle

    read = read_bundle(directory, rack_label)
    model = ClusterModel(
        ModelConfig(window_s=max(MIN_MODEL_WINDOW_S, read.window_s + 60), rack_label=rack_label)
    )
    model.apply_all([scrub_event(e) for e in read.events])  # as the hub does
    windows = {
        t.instance: (last - first if n >= 2 else None)
        for t, (first, last, n) in read.scrape_windows.items()
    }
    source = {
        "kind": "bundle",
        "path": directory,
        "missing": read.missing,
        "window_s": read.window_s,
    }
    sizes = tuple(
        Capacity(
            f"full_list_bytes.{name}",
            f"Full LIST of {name}",
            float(size),
            "bytes",
            f"{count} objects x {size / count:.0f} bytes on average (JSON as kubectl printed it)"
            if count
            else "no objects",
        )
        for name, (count, size) in read.list_sizes.items()
    )
    errors = [str(e) for e in read.errors]
    return Sampled(model.snapshot(), source, errors, windows, capacity=sizes)


def from_recording(path: str, at: str | None) -> Sampled:
    """The model of a recording at ``at`` (default its end), rebuilt from its events with
    today's rules; the baseline is the recording's own history up to that moment.
    """
    from ktop.record.reader import Recording
    from ktop.sources.replay import parse_time

    with Recording(path) as rec:
        when = rec.end if at is None else parse_time(at, rec.start, rec.end)
        if not rec.start <= when <= rec.end:
            raise ValueError(
                f"--at {at}: the recording covers {rec.start:.0f} to {rec.end:.0f} (Unix seconds)"
            )
        cursor = rec.cursor(rec.start)
        t = rec.start
        while t < when:
            cursor.advance(t)
            cursor.model.snapshot()  # one history frame, as the app takes every refresh
            t += RECORDING_STEP_S
        cursor.advance(when)
        snap = cursor.model.snapshot()
        errors = [f"gap {g.start:.0f}-{g.end:.0f}: {g.reason}" for g in rec.gaps]
        if rec.truncated:
            errors.append("the file was cut: it ends at its last complete chunk")
        source = {"kind": "recording", "path": path, "at": when, "recorded": rec.describe()}
    return Sampled(snap, source, errors, baseline=baseline_source(snap, HistoryKind.RECORDING))


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
    from ktop.sources.bundle.reader import BundleNotFoundError

    given = [name for name, v in (("--bundle", args.bundle), ("--recording", args.recording),
                                   ("--context", args.context)) if v]  # fmt: skip
    if len(given) > 1:
        print(f"ktop triage: {' and '.join(given)} cannot be combined", file=sys.stderr)
        return EXIT_ERROR
    if args.at and not args.recording:
        print("ktop triage: --at goes with --recording", file=sys.stderr)
        return EXIT_ERROR
    from ktop.record.format import FormatError

    try:
        if args.recording:
            sampled = from_recording(args.recording, args.at)
        elif args.bundle:
            sampled = from_bundle(args.bundle, args.rack_label)
        else:
            from ktop.commands.sample import sample_live

            sampled = sample_live(args, args.context, args.window)
    except (BundleNotFoundError, FormatError, OSError, RuntimeError, ValueError) as exc:
        print(f"ktop triage: {scrub(exc)}", file=sys.stderr)
        return EXIT_ERROR
    text, code = render(sampled, args.output)
    sys.stdout.write(text)
    for err in sampled.errors:
        print(f"ktop triage: {err}", file=sys.stderr)
    return code
