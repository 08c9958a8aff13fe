"""``ktop replay FILE``: the live UI on a recording, with today's analysis.

``--info`` prints what the file holds (source, span, markers, gaps) without
the UI, for scripts and bug reports.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ktop.record.reader import Recording


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``replay`` to the subcommands."""
    from ktop import bounds

    p: argparse.ArgumentParser = sub.add_parser(
        "replay",
        help="replay a recording in the dashboard",
        description="Replay FILE with pause, speed, steps, jumps, seek and markers; "
        "triage runs with this version's rules.",
    )
    p.add_argument("file", metavar="FILE", help="a recording made by 'ktop record' or the app")
    p.add_argument(
        "--speed",
        type=bounds.bounded_float(bounds.REPLAY_SPEED),
        default=1.0,
        help=f"start speed, {bounds.REPLAY_SPEED.text()} (default 1)",
    )
    p.add_argument("--at", metavar="TIME", help="start at this time (HH:MM:SS, +SECONDS or Unix)")
    p.add_argument("--paused", action="store_true", help="start paused")
    p.add_argument("--info", action="store_true", help="print what the file holds and exit")
    return p


def clock(t: float) -> str:
    """A recording time as UTC ``YYYY-MM-DD HH:MM:SS``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


def info(rec: Recording) -> str:
    """A plain-text description of a recording."""
    h = rec.header
    lines = [
        f"{rec.path}: ktop recording, format version {rec.version}",
        f"  recorded by ktop {h.get('ktop', '?')}, source {rec.describe()}",
        f"  from {clock(rec.start)} to {clock(rec.end)} UTC ({rec.end - rec.start:.0f} s)",
        f"  {len(rec.chunks)} chunks, {len(rec.keyframes)} keyframes, "
        f"{'index' if rec.indexed else 'no index (rebuilt by a scan)'}"
        f"{', redacted' if h.get('redacted') else ''}",
    ]
    if rec.truncated:
        lines.append("  the file was cut (crash or copy): replay stops at its last complete chunk")
    for m in rec.markers:
        lines.append(f"  marker {clock(m.at)}  {m.note}")
    for g in rec.gaps:
        lines.append(f"  gap    {clock(g.start)} - {clock(g.end)}  {g.reason}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Open the recording and replay it (or describe it with ``--info``)."""
    from ktop.commands.dashboard import run_dashboard
    from ktop.compose import Replay, SourceError, open_recording

    if args.info:
        try:
            rec = open_recording(args.file)
        except SourceError as exc:
            print(f"ktop replay: {exc}", file=sys.stderr)
            return exc.status
        with rec:
            print(info(rec))
        return 0
    plan = Replay(args.file, args.speed, args.at, args.paused, needs_terminal=True)
    return run_dashboard(plan, args, command="ktop replay")
