"""``ktop replay DIR`` of a bundle or an OpenShift must-gather, with no conversion step.

The body: the bundle read once (``ktop/sources/bundle/reader.py``), its events played as a
timeline (``ktop/sources/bundle/timeline.py``) into a hub with a recorder as its sink, the
recording written in a temporary directory that is removed when the replay ends, then
replayed as any recording. What the bundle lacks or could not read is said first (and
by ``--info``); on screen each pane that needed it says so.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ktop.commands.record_out import record_to_end
from ktop.hub import Hub, HubPolicy
from ktop.printable import printable
from ktop.record.session import Recorder
from ktop.scrub import Secrets
from ktop.sources.bundle.parts import BundleRead
from ktop.sources.bundle.reader import BundleNotFoundError, read_bundle
from ktop.sources.bundle.timeline import BundleTimeline

if TYPE_CHECKING:
    from ktop.record.reader import Recording

RECORDING = "bundle.ktrec"


def _say(words: str) -> None:
    print(printable(f"ktop replay: {words}"), file=sys.stderr, flush=True)


def problems(directory: str, read: BundleRead) -> list[str]:
    """What the bundle lacks and what of it could not be read, a line each."""
    lines = [f"{directory}: not in it: {part}" for part in read.missing]
    return lines + [f"{directory}: {error}" for error in read.errors]


def rebuild(read: BundleRead, directory: str, path: Path, secrets: Secrets) -> str:
    """Write the bundle's timeline to the recording ``path``; an error, or ""."""
    hub = Hub(policy=HubPolicy(secrets))
    source = {"kind": "bundle", "context": Path(directory).name, "detail": directory}
    rec = Recorder(str(path), hub, source=source)
    record_to_end(BundleTimeline(read), hub, rec)
    return rec.status().error


def replay_bundle(
    args: argparse.Namespace, secrets: Secrets, info: Callable[[Recording], str]
) -> int:
    """Replay (or, with ``--info``, describe with ``info``) the bundle or must-gather
    ``args.file``.
    """
    from ktop.commands.dashboard import run_dashboard
    from ktop.compose import Replay, SourceError, open_recording

    try:
        read = read_bundle(args.file)
    except BundleNotFoundError as exc:
        _say(secrets.scrub(str(exc)))
        return 2
    said = problems(args.file, read)
    if read.at <= 0:
        _say(f"{args.file}: nothing in it to replay (no scrape, dump or object with a time)")
        for line in said:
            _say(line)
        return 2
    with tempfile.TemporaryDirectory(prefix="ktop-replay-") as tmp:
        path = Path(tmp) / RECORDING
        error = rebuild(read, args.file, path, secrets)
        if error:
            _say(f"{args.file}: cannot rebuild it as a recording: {secrets.scrub(error)}")
            return 2
        if args.info:
            try:
                rec = open_recording(str(path), secrets)
            except SourceError as exc:
                _say(str(exc))
                return exc.status
            with rec:
                described = info(rec).removeprefix(f"{printable(str(path))}: ")
                print(printable(f"{args.file}: a bundle, rebuilt as a ") + described)
            print("\n".join(printable(line) for line in said))
            return 0
        for line in said:
            _say(line)
        plan = Replay(str(path), args.speed, args.at, args.paused, needs_terminal=True)
        return run_dashboard(plan, args, secrets, command="ktop replay")
