"""``ktop``: the dashboard on a live cluster; and the dashboard every command opens on its
source (``demo``, ``replay``), with the app options they share.
"""

from __future__ import annotations

import argparse
from typing import Any

from ktop.compose import KindCluster, Live, OpenedSource, SourcePlan, live_options, with_source


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


def run_dashboard(plan: SourcePlan | KindCluster, args: argparse.Namespace, *, command: str) -> int:
    """Open ``plan`` and run the dashboard on it until the user quits; the source is
    released before an error of the app is raised.
    """

    async def dashboard(opened: OpenedSource) -> int:
        from ktop.ui.app import KtopApp

        app = KtopApp(opened.hub, [opened.source], **app_options(args), replay=opened.replay)
        await app.run_async()
        if app.crash is not None:
            raise app.crash
        return 0

    return with_source(plan, dashboard, command=command)


def run(args: argparse.Namespace) -> int:
    """Run ``ktop`` (no subcommand): the dashboard on the live cluster of the options."""
    return run_dashboard(Live(live_options(args), needs_terminal=True), args, command="ktop")
