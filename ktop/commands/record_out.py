"""What every way of recording shares: the recorder the file is written by, the stop it
makes (``--max-size``, a write error), and the line that sums the file up.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable

from ktop.hub import Hub
from ktop.record.redact import Redactor
from ktop.record.session import Recorder
from ktop.runner import EndOfSource, Signals, Verdict, run_until
from ktop.sources.base import Source


def recorder(
    args: argparse.Namespace, hub: Hub, source: dict[str, str], redactor: Redactor | None = None
) -> Recorder | None:
    """The recorder of ``-o`` (None, said, when the file exists or cannot be created)."""
    try:
        return Recorder(
            args.output,
            hub,
            source=source,
            redact=args.redact,
            redactor=redactor,
            max_size=args.max_size,
        )
    except FileExistsError:
        print(f"ktop record: {args.output} exists; choose another name", file=sys.stderr)
    except OSError as exc:
        print(f"ktop record: cannot create {args.output}: {exc.strerror}", file=sys.stderr)
    return None


def summary(rec: Recorder, started: float, now: float) -> int:
    """Say what was written; 1 when the recorder met an error."""
    st = rec.status()
    print(
        f"ktop record: {st.events} events, {st.size / 1e6:.2f} MB, {now - started:.0f} s "
        f"of source time to {st.path} ({st.stopped_because})",
        file=sys.stderr,
    )
    if st.error:
        print(f"ktop record: {st.error}", file=sys.stderr)
        return 1
    return 0


def stopped(rec: Recorder) -> Verdict:
    """The recorder's own stop (``--max-size``, a write error) as a stop condition."""
    return Verdict(lambda: None if rec.active else rec.stopped_because)


def record_to_end(source: Source, hub: Hub, rec: Recorder, error: Callable[[], str] = str) -> None:
    """Run ``source`` into ``hub`` with ``rec`` as its sink until the source ends, a signal
    arrives or the recorder stops itself, then stop the recorder with the reason (the
    source's own ``error`` first, when it has one).
    """
    hub.add_sink(rec)
    result = asyncio.run(run_until(source, hub, stopped(rec), Signals(), EndOfSource()))
    rec.stop(error() or result.reason)
