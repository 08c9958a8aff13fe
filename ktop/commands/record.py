"""``ktop record -o FILE``: record a cluster or a simulated scenario, headless.

It runs from cron, CI or an incident bot: no terminal UI, stops after
``--duration`` seconds (source clock), at ``--max-size`` bytes, or on
SIGINT, SIGTERM or SIGHUP, and always leaves a readable file (index written on stop).
The command is its options and a body: the source runs into the hub under
:func:`ktop.runner.run_until` until the first of these.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
from typing import TYPE_CHECKING, Any

from ktop.bounds import bounded_size
from ktop.commands.record_out import recorder, stopped, summary
from ktop.compose import Demo, Live, OpenedSource, SourcePlan, live_options, with_source
from ktop.hub import Hub, HubPolicy
from ktop.model.cluster import ClusterModel
from ktop.printable import printable
from ktop.record.redact import Redactor
from ktop.record.session import Recorder
from ktop.runner import Duration, EndOfSource, Signals, StopCondition, run_until
from ktop.scrub import Secrets
from ktop.sources.base import Emit

if TYPE_CHECKING:
    from ktop.record.codec import Marker
    from ktop.record.reader import Recording


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``record`` to the subcommands."""
    from ktop import bounds
    from ktop.commands.options import moment, simulator_options, url

    p: argparse.ArgumentParser = sub.add_parser(
        "record",
        help="record a cluster (or a simulated scenario) to a file, headless",
        description="Record the events ktop reads to FILE, without the UI. "
        "Replay with 'ktop replay FILE'.",
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="recording to create")
    p.add_argument("--demo", metavar="SCENARIO", help="record the simulator playing SCENARIO")
    p.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help="copy an existing recording (with --redact: a shareable copy of it)",
    )
    p.add_argument(
        "--from-prometheus",
        type=url,
        metavar="URL",
        help="rebuild a past span from Prometheus history (--start, --end; --cluster and "
        "the --prometheus-* credentials apply): docs/history.md",
    )
    p.add_argument(
        "--from-openmetrics",
        metavar="FILE",
        help="rebuild the span of a 'promtool tsdb dump-openmetrics' slice (gzipped or "
        "not; a must-gather's monitoring/metrics/metrics.openmetrics): docs/history.md",
    )
    p.add_argument("--start", type=moment, metavar="TIME", help="with --from-prometheus: from")
    p.add_argument("--end", type=moment, metavar="TIME", help="with --from-prometheus: until")
    simulator_options(p, when="with --demo")
    p.add_argument(
        "--speed",
        type=_record_speed,
        default=0.0,
        help=f"--demo pace: 1 = real time, 0 = as fast as possible (default); otherwise "
        f"{bounds.SPEED.text()}",
    )
    p.add_argument(
        "--duration",
        type=bounds.bounded_float(bounds.RECORD_DURATION),
        metavar="SECONDS",
        help=f"stop after this much source time ({bounds.RECORD_DURATION.text()})",
    )
    p.add_argument(
        "--max-size",
        type=bounded_size(bounds.RECORD_MAX_SIZE),
        metavar="SIZE",
        help=f"stop at this file size, {bounds.RECORD_MAX_SIZE.text()} (200M, 2G)",
    )
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace node, pod, namespace, context names and server addresses with stand-ins",
    )
    return p


def _record_speed(text: str) -> float:
    """``--speed`` of a recording: 0 (as fast as possible) or the demo's bounded speed."""
    from ktop import bounds
    from ktop.bounds import bounded_float

    if text.strip() in ("0", "0.0"):
        return 0.0
    return bounded_float(bounds.SPEED)(text)


def _fail(message: str) -> int:
    print(printable(f"ktop record: {message}"), file=sys.stderr)
    return 2


def run(args: argparse.Namespace, secrets: Secrets) -> int:
    """Record until the duration, the size limit or a signal; 0 when the file is complete."""
    sources = (
        ("--demo", args.demo),
        ("--from", args.from_file),
        ("--from-openmetrics", args.from_openmetrics),
    )
    given = [o for o, v in (*sources, ("--from-prometheus", args.from_prometheus)) if v]
    if len(given) > 1:
        return _fail(f"{' and '.join(given)} cannot be combined")
    if (args.start is not None or args.end is not None) and args.from_prometheus is None:
        return _fail("--start and --end go with --from-prometheus")
    if args.from_prometheus is not None:
        from ktop.commands.record_history import record_history

        return record_history(args, secrets)
    if args.from_openmetrics is not None:
        from ktop.commands.record_history import record_slice

        return record_slice(args, secrets)
    if args.demo is not None:
        from ktop.sources.sim.scenarios import SCENARIOS

        if args.demo not in SCENARIOS:
            return _fail(f"unknown scenario {args.demo!r}; choose one of: {', '.join(SCENARIOS)}")
        if args.duration is None and args.speed == 0:
            return _fail("--demo without --speed needs --duration (it would never end)")
    if args.from_file is not None:
        return _copy(args, secrets)
    record = functools.partial(_record, args)
    return with_source(_plan(args), record, command="ktop record", secrets=secrets)


def _plan(args: argparse.Namespace) -> SourcePlan:
    if args.demo is None:
        return Live(live_options(args))
    if args.speed == 0:  # as fast as possible: one simulated second per batch
        return Demo.from_args(args, args.demo, speed=0.0)
    # At most 1 s of simulated time per batch, so --duration is met to the second.
    return Demo.from_args(args, args.demo, speed=args.speed, tick_s=min(1.0, 1.0 / args.speed))


async def _record(args: argparse.Namespace, opened: OpenedSource) -> int:
    hub = opened.hub
    rec = recorder(args, hub, opened.info)
    if rec is None:
        return 2
    hub.add_sink(rec)
    stops: list[StopCondition] = [stopped(rec), Signals(), EndOfSource()]
    if args.duration is not None:
        stops.insert(0, Duration(args.duration, f"--duration {args.duration:g} s reached"))
    result = await run_until(opened.source, hub, *stops)
    rec.stop(result.reason)
    return summary(rec, hub.now if result.started is None else result.started, hub.now)


def _copy(args: argparse.Namespace, secrets: Secrets) -> int:
    """Re-record every event and marker of ``--from`` (redacted with ``--redact``)."""
    from ktop.record.format import FormatError
    from ktop.record.reader import Recording

    try:
        src = Recording(args.from_file)
    except (FormatError, OSError) as exc:
        return _fail(f"{args.from_file}: {exc}")
    with src:
        hub = Hub(ClusterModel(src.model_config), HubPolicy(secrets))
        source = {str(k): str(v) for k, v in src.header.get("source", {}).items()}
        markers = sorted(src.markers, key=lambda m: m.at)
        redactor = _learnt(src, source, markers) if args.redact else None
        rec = recorder(args, hub, source, redactor)
        if rec is None:
            return 2
        hub.add_sink(rec)
        copy = _Copy(src, markers, rec)
        asyncio.run(run_until(copy, hub, stopped(rec), EndOfSource()))
        rec.stop(f"copied from {args.from_file}")
        code = summary(rec, src.start, hub.now)
        if src.gaps:
            print(
                f"ktop record: {len(src.gaps)} gap(s) in the source were skipped", file=sys.stderr
            )
        return code


class _Copy:
    """A recording's events as fast as they can be read, its markers written into the
    recorder between them (each before the first batch after it; the rest at the end).
    """

    name = "copy"

    def __init__(self, src: Recording, markers: list[Marker], rec: Recorder) -> None:
        self._src, self._markers, self._rec = src, markers, rec

    async def run(self, emit: Emit) -> None:
        """Emit each moment's events in order, then write the markers left."""
        cur, markers = self._src.cursor(self._src.start - 1.0), self._markers
        while (nxt := cur.next_time()) is not None and self._rec.active:
            while markers and markers[0].at < nxt:
                m = markers.pop(0)
                self._rec.mark(m.note, m.at)
            emit(cur.take(nxt))
        for m in markers:
            self._rec.mark(m.note, m.at)


def _learnt(src: Recording, source: dict[str, str], markers: list[Marker]) -> Redactor:
    """A redactor that has met every name of the recording (its source, events and marker
    notes) first, so that text naming an object before it appears is hidden too.
    """
    redactor = Redactor()
    redactor.source(source)
    learner = src.cursor(src.start - 1.0)
    while (t := learner.next_time()) is not None:
        redactor.learn(learner.take(t))
    for m in markers:
        redactor.text(m.note)
    return redactor
