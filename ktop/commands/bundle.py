"""``ktop bundle capture --context X DIR``: write an offline bundle of a live cluster.

The bundle is what a user could assemble by hand with kubectl and curl
(``docs/bundle-format.md``); ``ktop triage --bundle DIR`` reads it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ktop import bounds
from ktop.bounds import bounded_float, bounded_int
from ktop.scrub import Secrets

DEFAULT_SCRAPES = 2
DEFAULT_INTERVAL_S = 10.0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``ktop bundle`` and its ``capture`` action."""
    p: argparse.ArgumentParser = sub.add_parser(
        "bundle",
        help="capture an offline bundle of a live cluster",
        description="Offline bundles (docs/bundle-format.md).",
    )
    actions = p.add_subparsers(dest="bundle_action", metavar="ACTION", required=True)
    cap = actions.add_parser(
        "capture",
        help="write a bundle of a live cluster into DIR",
        description=(
            "Read every API list, scrape every reachable metrics target twice (rates need "
            "two scrapes) and each apiserver's APF dump, and write them as a bundle."
        ),
    )
    cap.add_argument("directory", metavar="DIR")
    cap.add_argument(
        "--scrapes",
        type=bounded_int(bounds.BUNDLE_SCRAPES),
        default=DEFAULT_SCRAPES,
        help=f"scrapes per target, {bounds.BUNDLE_SCRAPES.text()}",
    )
    cap.add_argument(
        "--interval",
        type=bounded_float(bounds.BUNDLE_INTERVAL),
        default=DEFAULT_INTERVAL_S,
        metavar="SECONDS",
        help=f"seconds between scrapes (default {DEFAULT_INTERVAL_S:g})",
    )
    return cap


async def _capture(args: argparse.Namespace, secrets: Secrets) -> int:
    from ktop.compose import SourceError, live_options, open_connection
    from ktop.sources.bundle.capture import capture

    try:
        conn = await open_connection(args.kubeconfig, args.context, secrets=secrets)
    except SourceError as exc:
        print(f"ktop bundle capture: {exc}", file=sys.stderr)
        return exc.status
    try:
        done = await capture(
            conn,
            live_options(args),
            args.directory,
            scrapes=max(1, args.scrapes),
            interval_s=args.interval,
        )
    finally:
        await conn.close()
    for failure in done.failures:
        print(f"ktop bundle capture: not captured: {secrets.scrub(failure)}", file=sys.stderr)
    print(f"wrote {len(done.files)} files to {args.directory}")
    return 0 if done.files else 2


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Run ``ktop bundle capture``."""
    return asyncio.run(_capture(args, secrets))
