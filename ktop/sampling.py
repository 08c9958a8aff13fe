"""One snapshot to triage: a live cluster sampled for a short window, an offline bundle
folded whole, or a recording's model at a moment.

Each comes with where it came from and what went wrong on the way (:class:`Sampled`);
``ktop triage`` reports on it. Every one is folded and published by a hub (the bundle's
and the live cluster's run into it under :mod:`ktop.runner`); its triage report is the
published snapshot's.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ktop.analysis.triage.baseline import HistoryKind
from ktop.analysis.triage.types import Capacity
from ktop.compose import Bundle, Live, OpenedSource, live_options, open_recording, open_source
from ktop.hub import Hub, HubPolicy, Published
from ktop.model.audit_digest import AuditDigest
from ktop.model.events import (
    FEED_PROMETHEUS,
    FEED_PROMETHEUS_BACKFILL,
    Area,
    ClockTick,
    Event,
    FeedFailed,
    FeedSynced,
    MetricsScraped,
    SourceStarted,
    Target,
)
from ktop.model.feeds import OBJECT_FEEDS
from ktop.record.frames import walk
from ktop.runner import Deadline, EndOfSource, Verdict, run_until, running
from ktop.scrub import Secrets
from ktop.sources.live.timing import BACKFILL_TIMEOUT_S
from ktop.sources.replay import parse_time

LOOK_BACK_PROMETHEUS = "Prometheus range queries"
"""What the look-back was judged from when Prometheus' backfill read it."""
LOOK_BACK_SINCE_START = "counters since each process started"
"""What it was judged from without Prometheus: the counters of the processes that started
within it count whole (:mod:`ktop.model.since_start`), the others from ktop's own scrapes."""
SAMPLE_FRAME_S = 1.0
"""A live sample takes a history frame this often, as the app does every refresh, so that
its trends and incident timeline see what changed during the window."""
SCRAPES_PER_WINDOW = 3
"""Scrape this many times per window, so that rates have two scrapes or more."""
FIRST_ROUND = "every configured target scraped once; sampling continues"
"""Said on standard error once the first scrape of every configured target arrived."""
BACKFILL_WAIT = "waiting for the Prometheus history backfill (the baseline)"
AUDIT_ONLY = "not read: audit logs alone were given (add --context or --bundle)"


@dataclass(slots=True)
class Sampled:
    """A snapshot to triage, with where it came from and what went wrong on the way."""

    published: Published
    """The snapshot as its hub published it: its triage report (its history the baseline,
    with a bundle's sizes) and incident timeline (with a recording's markers)."""
    source: dict[str, Any]
    errors: list[str] = field(default_factory=list)
    windows: dict[str, float | None] = field(default_factory=dict)
    files: Mapping[Area, tuple[str, ...]] = field(default_factory=dict)
    """A bundle's files per pane (empty for other sources): what each evidence rests on."""


async def from_bundle(
    directory: str, rack_label: str, secrets: Secrets, look_back_s: float
) -> Sampled:
    """Fold a bundle into one snapshot (the session's ``secrets`` scrub it), judging the
    ``look_back_s`` before its capture: a component that started within it counts since its
    start.
    """
    async with await open_source(Bundle(directory, rack_label, look_back_s), secrets) as opened:
        await run_until(opened.source, opened.hub, EndOfSource())  # scrubbed and folded
    read = opened.bundle
    assert read is not None
    windows = {
        t.instance: (last - first if n >= 2 else None)
        for t, (first, last, n) in read.scrape_windows.items()
    }
    source = {
        "kind": "bundle",
        "path": directory,
        "missing": read.missing,
        "window_s": read.window_s,
        **look_back_info(opened.hub.config.window_s, False, ""),
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
    errors = [secrets.scrub(e) for e in read.errors]
    published = opened.hub.publish(force=True)
    assert published is not None
    files = read.files_by_area()
    return Sampled(replace(published, capacity=sizes), source, errors, windows, files)


def from_recording(path: str, at: str | None, secrets: Secrets) -> Sampled:
    """The model of a recording at ``at`` (default its end), rebuilt from its events with
    today's rules and published by a hub with the session's ``secrets``; the baseline is
    the recording's own history up to that moment (its last hour: the history's retention,
    :func:`walk`).
    """
    with open_recording(path, secrets) as rec:
        try:
            when = rec.end if at is None else parse_time(at, rec.start, rec.end)
        except ValueError as exc:
            raise ValueError(f"--at: {exc}") from None
        cursor = rec.cursor(rec.start)
        # the cursor folds into the hub's model, as a replay's seek does (in bulk)
        hub = Hub(cursor.model, HubPolicy(secrets, HistoryKind.RECORDING))
        hub.add_markers([(m.at, m.note) for m in rec.markers])
        walk(cursor, rec.start, when)
        published = hub.publish(force=True)
        assert published is not None
        errors = [f"gap {g.start:.0f}-{g.end:.0f}: {g.reason}" for g in rec.gaps]
        errors += [f"{path}: {f}" for f in rec.faults if not any(f == g.reason for g in rec.gaps)]
        if rec.truncated:
            errors.append("the file was cut: it ends at its last complete chunk")
        errors = [secrets.scrub(e) for e in errors]
        source = {"kind": "recording", "path": path, "at": when, "recorded": rec.describe()}
        windows = {t.instance: ts.span_s for t, ts in cursor.model.series.items()}
    return Sampled(published, source, errors, windows)


def model_window_s(look_back_s: float, window_s: float) -> float:
    """The model's window of a one-shot: the look-back, and never less than the sample
    itself (its own scrapes are the least it judges). The Prometheus backfill reads the raw
    samples of this window (range selectors over it), so that a counter's increase, a
    rate, a quantile count everything within the look-back; without Prometheus, a
    component's counters since its process started count when it started within it
    (:mod:`ktop.model.since_start`).
    """
    return max(look_back_s, window_s)


def look_back_info(look_back_s: float, prometheus: bool, backfill_error: str) -> dict[str, Any]:
    """The look-back as the report's ``source`` states it (docs/triage-json.md): how far
    back, and what it was judged from.
    """
    if prometheus and not backfill_error:
        judged = LOOK_BACK_PROMETHEUS
    elif prometheus:
        judged = (
            f"{LOOK_BACK_PROMETHEUS} as far as answered ({backfill_error}), "
            f"else {LOOK_BACK_SINCE_START}"
        )
    else:
        judged = LOOK_BACK_SINCE_START
    return {"look_back_s": look_back_s, "look_back_from": judged}


async def sample_live(
    args: argparse.Namespace,
    context: str | None,
    window_s: float,
    secrets: Secrets,
    look_back_s: float,
) -> Sampled:
    """Read the cluster of ``context`` for ``window_s`` seconds (scraping several times)
    and fold it, with the session's ``secrets``, judging the last ``look_back_s`` seconds
    (:func:`model_window_s`). :class:`~ktop.compose.SourceError` when it cannot be read at
    all.
    """
    args = copy.copy(args)
    args.context = context
    args.scrape_interval = max(1.0, min(args.scrape_interval, window_s / SCRAPES_PER_WINDOW))
    look_back_s = model_window_s(look_back_s, window_s)
    plan = Live(replace(live_options(args), window_s=look_back_s))
    async with await open_source(plan, secrets) as opened:
        return await _sample(args, opened, window_s, look_back_s)


async def _sample(
    args: argparse.Namespace, opened: OpenedSource, window_s: float, look_back_s: float
) -> Sampled:
    hub = opened.hub
    scrapes: dict[Target, list[float]] = {}
    expected = (
        max(1, len(args.apiserver))
        + len(args.etcd_metrics)
        + len(args.scheduler_metrics)
        + len(args.controller_manager_metrics)
    )
    said = False
    backfill_done = False
    """The Prometheus backfill (the baseline's history) reported, or Prometheus failed."""
    backfill_error = "not read" if args.prometheus else ""
    """Why Prometheus did not give the look-back (empty once its backfill synced)."""

    def watch(events: Sequence[Event]) -> None:
        # A sink: it sees each batch scrubbed and folded.
        nonlocal said, backfill_done, backfill_error
        for e in events:
            if isinstance(e, MetricsScraped):
                scrapes.setdefault(e.target, []).append(e.at)
            elif (
                isinstance(e, FeedSynced | FeedFailed) and e.feed == FEED_PROMETHEUS_BACKFILL
            ) or (isinstance(e, FeedFailed) and e.feed == FEED_PROMETHEUS):
                backfill_done = True
                backfill_error = e.reason if isinstance(e, FeedFailed) else ""
        if not said and len(scrapes) >= expected:
            said = True
            print(f"ktop triage: {FIRST_ROUND}", file=sys.stderr, flush=True)

    hub.add_sink(watch)
    started = time.monotonic()
    async with running([opened.source], hub) as run:
        # one history frame a second (none when nothing arrived)
        await run.until(Deadline(window_s), every=SAMPLE_FRAME_S, tick=hub.publish_off_loop)
        if args.prometheus and not backfill_done:
            # the last hour from Prometheus is the baseline: wait for it (bounded by the
            # backfill's own limit) rather than report without one
            print(f"ktop triage: {BACKFILL_WAIT}", file=sys.stderr, flush=True)
            backfilled = Verdict(lambda: "backfilled" if backfill_done else None)
            await run.until(backfilled, Deadline(BACKFILL_TIMEOUT_S))
    for _, exc in run.failures:  # the source failed before the window ended
        raise RuntimeError(f"live source failed: {exc}") from exc
    windows = {
        t.instance: (max(ts) - min(ts) if len(ts) >= 2 else None) for t, ts in scrapes.items()
    }
    source_info = {
        "kind": "live",
        "context": opened.info["context"],
        "window_s": round(time.monotonic() - started, 1),
        **look_back_info(look_back_s, bool(args.prometheus), backfill_error),
    }
    # the history holds Prometheus' last hour when --prometheus backfilled it
    published = hub.publish(force=True)
    assert published is not None
    return Sampled(published, source_info, [], windows)


def audit_only(audit: AuditDigest, secrets: Secrets) -> Sampled:
    """A report from audit logs alone: no cluster read, so every input but the audit
    logs is unknown (said so, never taken for healthy), at the logs' last request.
    """
    at = audit.last if audit.last is not None else time.time()
    hub = Hub(policy=HubPolicy(secrets, None))
    hub.ingest([SourceStarted(at - 1.0, "audit-log", "", AUDIT_ONLY, first_data_due_s=0.0)])
    hub.ingest([FeedFailed(at, feed, AUDIT_ONLY) for feed in OBJECT_FEEDS] + [ClockTick(at)])
    published = hub.publish(force=True)
    assert published is not None
    return Sampled(
        replace(published, audit=audit), {"kind": "audit-log", "files": list(audit.files)}
    )
