"""``ktop record -o FILE --from-prometheus URL --start T --end T`` and ``--from-openmetrics
FILE``: a recording of a past span rebuilt from Prometheus history or from a promtool
slice (docs/history.md), replayed, rewound and triaged as any recording.

The body: the history source (``ktop/sources/prometheus_history.py``) into a hub with
the recorder as its sink, until the source has walked the span.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ktop.bounds import RECORD_DURATION
from ktop.commands.record_out import record_to_end, recorder, summary
from ktop.compose import live_options
from ktop.hub import Hub, HubPolicy
from ktop.printable import printable
from ktop.scrub import Secrets
from ktop.sources.base import Source
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.prometheus_connect import prometheus_client
from ktop.sources.live.prometheus_queries import cluster_matcher, readiness_labels
from ktop.sources.openmetrics_slice import SliceError, SliceSource, read_slice
from ktop.sources.prometheus_history import NOT_IN_HISTORY, PrometheusHistory

QUERY_TIMEOUT_S = 60.0
"""One chunk's query may take this long (a chunk of raw samples is large)."""


def _say(words: str) -> None:
    print(printable(f"ktop record: {words}"), file=sys.stderr, flush=True)


def record_history(args: argparse.Namespace, secrets: Secrets) -> int:
    """Rebuild ``--start`` to ``--end`` from ``--from-prometheus`` into ``-o``; 0 when the
    whole span was read, 1 when it stopped early (the file keeps what was read), 2 on a
    usage error.
    """
    if args.start is None or args.end is None:
        _say("--from-prometheus needs --start and --end")
        return 2
    if not 0 < args.end - args.start <= RECORD_DURATION.high:
        _say(f"--end must be after --start, and at most {RECORD_DURATION.text()} after it")
        return 2
    opts = live_options(args)
    address = str(args.from_prometheus)
    prom = prometheus_client(
        address, CostMeter(), auth=opts.prometheus_auth, timeout_s=QUERY_TIMEOUT_S, secrets=secrets
    )
    source = PrometheusHistory(
        prom,
        address,
        args.start,
        args.end,
        context=opts.cluster or address,
        matcher=cluster_matcher(opts.cluster_label, opts.cluster),
        progress=_say,
        secrets=secrets,
        readiness_labels=readiness_labels(opts.rack_label),
    )
    header = {"kind": "prometheus-history", "context": source.context, "prometheus": address}
    code = _record(args, secrets, source, header, args.start, args.end, lambda: source.error)
    if source.error:
        _say(f"stopped before --end: {secrets.scrub(source.error)}")
        return 1
    return code


def _record(
    args: argparse.Namespace,
    secrets: Secrets,
    source: Source,
    header: dict[str, str],
    start: float,
    end: float,
    error: Callable[[], str] = str,
) -> int:
    """``source`` into a hub with ``-o``'s recorder as its sink, until it ends; the header
    says the span and what history cannot hold.
    """
    hub = Hub(policy=HubPolicy(secrets))
    info = {**header, "start": f"{start:.0f}", "end": f"{end:.0f}"}
    rec = recorder(args, hub, {**info, "not_in_history": NOT_IN_HISTORY})
    if rec is None:
        return 2
    record_to_end(source, hub, rec, error)
    return summary(rec, start, hub.now)


def record_slice(args: argparse.Namespace, secrets: Secrets) -> int:
    """Rebuild the span of ``--from-openmetrics`` into ``-o``: 0 when the file is complete,
    2 when the slice cannot be used.
    """
    try:
        read = read_slice(args.from_openmetrics)
    except SliceError as exc:
        _say(secrets.scrub(exc))
        return 2
    for problem in read.problems:
        _say(f"{args.from_openmetrics}: {problem}")
    if read.first is None or read.last is None:
        _say(f"{args.from_openmetrics}: no sample of a family ktop reads ({read.lines} lines)")
        return 2
    header = {"kind": "openmetrics-slice", "context": str(args.from_openmetrics)}
    source = SliceSource(read, str(args.from_openmetrics))
    return _record(args, secrets, source, header, read.first, read.last)
