"""``ktop replay FILE``: the live UI on a recording, with today's analysis (a bundle or
must-gather directory is rebuilt as one first: ``ktop/commands/replay_bundle.py``).

``--info`` prints what the file holds (source, time range, size per hour, markers,
gaps, unreadable frames) without the UI, for scripts and bug reports; for a record
directory, its sessions and the files skipped first (``--session N`` picks the one shown
and played; ``ktop/record/recording_set.py``). A file that cannot
be read is one line naming it, the offset and what was expected there; exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ktop.printable import printable
from ktop.record.recording_set import RecordingSet, SetGap
from ktop.scrub import Secrets

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
    p.add_argument(
        "file",
        metavar="FILE",
        help="a recording made by 'ktop record' or the app, a --record-dir directory "
        "(its recordings as one timeline), or a bundle or OpenShift must-gather directory "
        "(its scrapes and objects as a timeline; docs/bundle-format.md)",
    )
    p.add_argument(
        "--speed",
        type=bounds.bounded_float(bounds.REPLAY_SPEED),
        default=1.0,
        help=f"start speed, {bounds.REPLAY_SPEED.text()} (default 1)",
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="start at this time (HH:MM:SS UTC, +SECONDS from the start, or Unix seconds); "
        "a time outside the recording is refused with its time range",
    )
    p.add_argument("--paused", action="store_true", help="start paused")
    p.add_argument(
        "--session",
        type=bounds.bounded_int(bounds.REPLAY_SESSION),
        metavar="N",
        help="a --record-dir directory: play its session N (default the newest; --info lists them)",
    )
    p.add_argument("--info", action="store_true", help="print what the file holds and exit")
    return p


def clock(t: float) -> str:
    """A recording time as UTC ``YYYY-MM-DD HH:MM:SS``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _per_hour(size: int, span_s: float) -> str:
    if span_s < 1:
        return "size per hour: n/a (shorter than a second)"
    return f"{size / 1e6 * 3600 / span_s:.2f} MB per hour"


def info(rec: Recording) -> str:
    """A plain-text description of a recording: format, source, time range, size per hour,
    chunks, markers, gaps and any frame that could not be read. What the file says (its
    source, marker notes, faults) is shown with its control characters escaped, one line each.
    """
    h = rec.header
    src = h.get("source", {})
    span = rec.end - rec.start
    lines = [
        f"{rec.path}: ktop recording, format version {rec.version}",
        f"  recorded by ktop {h.get('ktop', '?')}",
        f"  source {src.get('kind', '?')} {src.get('context', '?')}"
        + (f" ({src['detail']})" if src.get("detail") else ""),
        f"  from {clock(rec.start)} to {clock(rec.end)} UTC ({span:.0f} s)",
        f"  {rec.size / 1e6:.2f} MB, {_per_hour(rec.size, span)}",
        f"  {len(rec.chunks)} chunks, {len(rec.keyframes)} keyframes, "
        f"{'index' if rec.indexed else 'no index (rebuilt by a scan)'}"
        f"{', redacted' if h.get('redacted') else ''}",
    ]
    if rec.truncated:
        lines.append("  the file was cut (crash or copy): replay stops at its last complete chunk")
    lines.append(f"  {len(rec.markers)} markers" if rec.markers else "  no markers")
    for m in rec.markers:
        lines.append(f"  marker {clock(m.at)}  {m.note}")
    lines.append(f"  {len(rec.gaps)} gaps" if rec.gaps else "  no gaps")
    for g in rec.gaps:
        lines.append(f"  gap    {clock(g.start)} - {clock(g.end)}  {g.reason}")
    for fault in rec.faults:
        if not any(g.reason == fault for g in rec.gaps):
            lines.append(f"  unreadable {fault}")
    return "\n".join(printable(line) for line in lines)


def dir_info(files: RecordingSet) -> str:
    """A record directory: its sessions, the files skipped, then the session chosen (its
    span, the stretches without a recording, then each file).
    """
    span = files.end - files.start
    between = [g for g in files.gaps if isinstance(g, SetGap)]
    n = len(files.sessions)
    lines = [f"{files.directory}: {n} session{'' if n == 1 else 's'}"]
    lines += [
        f"  session {n}: {s.describe()}, from {clock(s.start)} to {clock(s.end)} UTC"
        for n, s in enumerate(files.sessions, 1)
    ]
    lines += [f"  skipped {line}" for line in files.skipped]
    lines.append(
        f"session {files.number}: {len(files.files)} recordings, from {clock(files.start)} to "
        f"{clock(files.end)} UTC ({span:.0f} s), {sum(r.size for r in files.files) / 1e6:.2f} MB"
    )
    lines += [f"  not recording {clock(g.start)} - {clock(g.end)}" for g in between]
    lines = [printable(line) for line in lines]
    lines += [info(files.opened(n)) for n in range(len(files.files))]
    return "\n".join(lines)


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Open the recording and replay it (or describe it with ``--info``)."""
    from ktop.commands.dashboard import run_dashboard
    from ktop.commands.replay_bundle import replay_bundle
    from ktop.compose import Replay, SourceError, open_record_dir, open_recording
    from ktop.sources.bundle.timeline import is_bundle

    if is_bundle(Path(args.file)):
        return replay_bundle(args, secrets, info)
    if args.info:
        try:
            if Path(args.file).is_dir():
                with open_record_dir(args.file, secrets, args.session) as files:
                    print(dir_info(files))
                return 0
            rec = open_recording(args.file, secrets)
        except SourceError as exc:
            print(printable(f"ktop replay: {exc}"), file=sys.stderr)
            return exc.status
        with rec:
            print(info(rec))
        return 0
    plan = Replay(
        args.file, args.speed, args.at, args.paused, needs_terminal=True, session=args.session
    )
    return run_dashboard(plan, args, secrets, command="ktop replay")
