"""``ktop``: the dashboard on a live cluster; and the dashboard every command opens on its
source (``demo``, ``replay``), with the app options they share.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from typing import Any

from ktop.compose import KindCluster, Live, OpenedSource, SourcePlan, live_options, with_source
from ktop.gc_policy import Collector
from ktop.record import rewind_files
from ktop.record.rewind_files import RewindRecorder
from ktop.record.rotating import Retention, RotatingRecorder
from ktop.runner import stop_on_signals, stopping_note
from ktop.scrub import Secrets


def app_options(args: argparse.Namespace) -> dict[str, Any]:
    """The app's keyword arguments from the resolved common options."""
    from ktop.ui.display import Display

    return {
        "refresh_s": args.refresh,
        "theme": args.theme,
        "display": Display.from_options(
            ascii_only=args.ascii, low_bandwidth=args.low_bandwidth, prod_pattern=args.prod_pattern
        ),
    }


REWIND_RETAIN = Retention(retain_s=3600.0, max_bytes=512 << 20)
"""What a session without ``--record-dir`` keeps so that it can be rewound: the last hour,
at most 512 MiB, in files without a name in ``$TMPDIR`` that nothing outlives
(``ktop/record/rewind_files.py``); where those cannot be read back (not Linux), in a
private temporary directory removed when ktop stops."""


def _private_dir() -> tempfile.TemporaryDirectory[str] | None:
    """A private directory for the rewind recording where its files cannot be without a
    name (None: none is needed, or none can be made: no rewind).
    """
    if rewind_files.supported():
        return None
    try:
        return tempfile.TemporaryDirectory(prefix="ktop-rewind-")
    except OSError:
        return None


def always_on_recorder(
    args: argparse.Namespace, opened: OpenedSource, private: str | None
) -> RotatingRecorder | None:
    """The session's own recorder, added to the hub (never for a replay): into
    ``--record-dir`` within its limits, or else, for rewinding, within
    :data:`REWIND_RETAIN`: into files without a name, or the ``private`` directory where
    there are none (None: no recording could start, no rewind).
    """
    if opened.replay is not None:
        return None
    model = opened.hub.model
    # what the source said it is as it opened (the model learns it only from events)
    source = {"kind": model.source_kind, "context": model.context, "detail": ""}
    source.update({k: v for k, v in opened.info.items() if v})
    rec: RotatingRecorder
    if args.record_dir:
        retention = Retention(args.retain, args.max_disk)
        rec = RotatingRecorder(args.record_dir, opened.hub, source=source, retention=retention)
    elif private is not None:
        rec = RotatingRecorder(private, opened.hub, source=source, retention=REWIND_RETAIN)
    elif rewind_files.supported():
        where = tempfile.gettempdir()
        rec = RewindRecorder(where, opened.hub, source=source, retention=REWIND_RETAIN)
    else:
        return None
    if not args.record_dir and not rec.active:
        rec.close()
        return None  # the rewind recording could not start: no rewind
    opened.hub.add_sink(rec)
    return rec


def run_dashboard(
    plan: SourcePlan | KindCluster, args: argparse.Namespace, secrets: Secrets, *, command: str
) -> int:
    """Open ``plan`` with the session's ``secrets`` and run the dashboard on it until the
    user quits; the source is released before an error of the app is raised.
    """

    async def dashboard(opened: OpenedSource) -> int:
        from ktop.ui.app import KtopApp

        private = None if args.record_dir or opened.replay is not None else _private_dir()
        always_on = always_on_recorder(args, opened, private.name if private else None)
        notes = [*opened.notes, *(always_on.recovered if always_on is not None else ())]
        for note in notes:  # also on standard error: still there after the app ends
            print(f"{command}: {opened.hub.secrets.scrub(note)}", file=sys.stderr)
        collector = Collector()
        collector.install()
        app = KtopApp(
            opened.hub,
            [opened.source],
            **app_options(args),
            replay=opened.replay,
            always_on=always_on,
            always_on_shown=bool(args.record_dir),
            collector=collector,
            notes=notes,
        )
        try:
            with stop_on_signals(app.stop_soon):
                await app.run_async()
        finally:
            with stopping_note(command):  # the screen is given back: say why ktop is still here
                collector.uninstall()
                if app.rec.rewinder is not None:
                    app.rec.rewinder.close()
                if always_on is not None:
                    always_on.stop("ktop stopped")
                    always_on.close()
                    opened.hub.remove_sink(always_on)
                if private is not None:
                    private.cleanup()
        if app.crash is not None:
            raise app.crash
        return 0

    # every screen's first line is the diagnosis: drawn as each snapshot is published
    return with_source(plan, dashboard, command=command, secrets=secrets, triage_on_publish=True)


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Run ``ktop`` (no subcommand): the dashboard on the live cluster of the options."""
    plan = Live(live_options(args), needs_terminal=True)
    return run_dashboard(plan, args, secrets, command="ktop")
