"""Sample a live cluster for a short window and fold what it gave into one snapshot."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import sys
import time
from collections.abc import Sequence
from dataclasses import replace

from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.commands.triage import MIN_MODEL_WINDOW_S, Sampled
from ktop.model.cluster import ClusterModel, ModelConfig
from ktop.model.events import (
    FEED_PROMETHEUS,
    FEED_PROMETHEUS_BACKFILL,
    Event,
    FeedFailed,
    FeedSynced,
    MetricsScraped,
    Target,
)
from ktop.model.scrub import scrub_event

SCRAPES_PER_WINDOW = 3
"""Scrape this many times per window, so that rates have two scrapes or more."""
FIRST_ROUND = "every configured target scraped once; sampling continues"
"""Said on standard error once the first scrape of every configured target arrived."""
BACKFILL_WAIT = "waiting for the Prometheus history backfill (the baseline)"


async def _sample(args: argparse.Namespace, window_s: float) -> Sampled:
    from ktop.cli import _live_opts
    from ktop.sources.kubeconfig import KubeconfigError
    from ktop.sources.live.client import ConnectError, connect, probe
    from ktop.sources.live.source import BACKFILL_TIMEOUT_S, LiveSource

    try:
        conn = await connect(args.kubeconfig, args.context)
    except KubeconfigError as exc:
        raise RuntimeError(str(exc)) from exc
    try:
        await probe(conn)
    except ConnectError as exc:
        await conn.close()
        raise RuntimeError(str(exc)) from exc
    model = ClusterModel(ModelConfig(window_s=MIN_MODEL_WINDOW_S, rack_label=args.rack_label))
    scrapes: dict[Target, list[float]] = {}
    expected = (
        max(1, len(args.apiserver))
        + len(args.etcd_metrics)
        + len(args.scheduler_metrics)
        + len(args.controller_manager_metrics)
    )
    said = False
    backfill_done = asyncio.Event()
    """The Prometheus backfill (the baseline's history) reported, or Prometheus failed."""

    def emit(events: Sequence[Event]) -> None:
        nonlocal said
        # As the hub does: no source's free text reaches the report unscrubbed.
        events = [scrub_event(e) for e in events]
        for e in events:
            if isinstance(e, MetricsScraped):
                scrapes.setdefault(e.target, []).append(e.at)
            elif (
                isinstance(e, FeedSynced | FeedFailed) and e.feed == FEED_PROMETHEUS_BACKFILL
            ) or (isinstance(e, FeedFailed) and e.feed == FEED_PROMETHEUS):
                backfill_done.set()
        model.apply_all(events)
        if not said and len(scrapes) >= expected:
            said = True
            print(f"ktop triage: {FIRST_ROUND}", file=sys.stderr, flush=True)

    # the backfill reads the raw data of the model's window
    source = LiveSource(replace(_live_opts(args), window_s=model.config.window_s), conn=conn)
    task = asyncio.create_task(source.run(emit))
    started = time.monotonic()
    try:
        await asyncio.sleep(window_s)
        if args.prometheus and not backfill_done.is_set():
            # the last hour from Prometheus is the baseline: wait for it (bounded by the
            # backfill's own limit) rather than report without one
            print(f"ktop triage: {BACKFILL_WAIT}", file=sys.stderr, flush=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(BACKFILL_TIMEOUT_S):
                    await backfill_done.wait()
    finally:
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # the source failed before the window ended
            raise RuntimeError(f"live source failed: {exc}") from exc
        await conn.close()
    windows = {
        t.instance: (max(ts) - min(ts) if len(ts) >= 2 else None) for t, ts in scrapes.items()
    }
    source_info = {
        "kind": "live",
        "context": conn.context,
        "window_s": round(time.monotonic() - started, 1),
    }
    snap = model.snapshot()
    # the history holds Prometheus' last hour when --prometheus backfilled it
    return Sampled(
        snap, source_info, [], windows, baseline=baseline_source(snap, HistoryKind.THIS_RUN)
    )


def sample_live(args: argparse.Namespace, context: str | None, window_s: float) -> Sampled:
    """Read the cluster for ``window_s`` seconds (scraping several times) and fold it."""
    args = copy.copy(args)
    args.context = context
    args.scrape_interval = max(1.0, min(args.scrape_interval, window_s / SCRAPES_PER_WINDOW))
    return asyncio.run(_sample(args, window_s))
