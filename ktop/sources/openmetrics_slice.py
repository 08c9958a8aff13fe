"""A timestamped OpenMetrics slice of a Prometheus (``promtool tsdb dump-openmetrics
--min-time --max-time --match``; a must-gather's ``monitoring/metrics/metrics.openmetrics``,
gzipped or not) read as the scrapes it holds: every sample of a family ktop reads, of a
job that holds the apiservers, etcd, the scheduler or the controller-manager, as one
``MetricsScraped`` per target and timestamp, thinned to a cadence as the live backfill
thins Prometheus' raw samples (``ktop/sources/live/backfill.py``).

Streaming: the file is read line by line, and only the samples ktop reads are kept, at
most :data:`MAX_SAMPLES` of them (a larger slice is refused with how to cut it). A line
that is not a sample is named by its line number and skipped; a cut gzip keeps what came
before the cut and says so.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ktop.files import bounded_lines, gunzipped
from ktop.model.events import Component, Event, MetricsScraped, SourceStarted
from ktop.model.openmetrics_line import SliceLineError, parse_sample
from ktop.model.wanted import FAMILIES, HISTOGRAMS
from ktop.sources.base import Emit, emit_batched
from ktop.sources.live.backfill import matrix_to_events, merge_by_target, thinned
from ktop.sources.live.prometheus_queries import DEFAULT_JOBS
from ktop.sources.prometheus_history import NOT_IN_HISTORY, from_metrics

MAX_SAMPLES = 20_000_000
"""Samples kept from one slice (about 1.5 GB folded); past it the slice is refused."""
MAX_LINE_BYTES = 64 << 10
DEFAULT_STEP_S = 15.0
MAX_PROBLEMS = 20
_SUFFIXES = ("_bucket", "_sum", "_count", "_total")


class SliceError(Exception):
    """The slice cannot be used at all (unreadable, or over :data:`MAX_SAMPLES`)."""


@dataclass(slots=True)
class SliceRead:
    """The slice's scrapes, in time order, and what was wrong with it."""

    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    malformed: int = 0
    lines: int = 0
    kept: int = 0
    """Samples of the families ktop reads."""
    first: float | None = None
    last: float | None = None


def _wanted(component: Component) -> set[str]:
    names = set()
    for family in FAMILIES[component]:
        names.add(family)
        names.update(family + s for s in _SUFFIXES if family in HISTOGRAMS or s == "_total")
    return names


def _components(jobs: Mapping[Component, str]) -> list[tuple[Component, re.Pattern[str], set[str]]]:
    return [(c, re.compile(job), _wanted(c)) for c, job in jobs.items() if job]


class _Fold:
    """Series runs (the slice is written series by series) into matrix rows."""

    def __init__(self, jobs: Mapping[Component, str]) -> None:
        self.components = _components(jobs)
        self.rows: dict[Component, list[dict[str, Any]]] = {}
        self.current: tuple[str, tuple[tuple[str, str], ...]] | None = None
        self.values: list[list[Any]] | None = None
        self.kept = 0

    def add(self, name: str, labels: dict[str, str], value: float, at: float) -> None:
        key = (name, tuple(sorted(labels.items())))
        if key != self.current:
            self.current, self.values = key, None
            job = labels.get("job", "")
            for component, pattern, names in self.components:
                if name in names and pattern.fullmatch(job):
                    self.values = []
                    row = {"metric": {"__name__": name, **labels}, "values": self.values}
                    self.rows.setdefault(component, []).append(row)
                    break
        if self.values is not None:
            if self.kept >= MAX_SAMPLES:
                raise SliceError(
                    f"over {MAX_SAMPLES:,} samples of the families ktop reads: dump a shorter "
                    "span (promtool tsdb dump-openmetrics --min-time --max-time) or fewer "
                    "series (--match)"
                )
            self.values.append([at, repr(value)])
            self.kept += 1


def read_slice(
    path: str | Path, jobs: Mapping[Component, str] = DEFAULT_JOBS, step_s: float = DEFAULT_STEP_S
) -> SliceRead:
    """Every scrape a slice holds of the components ktop reads (:class:`SliceError` when
    it cannot be used at all).
    """
    out = SliceRead()
    fold = _Fold(jobs)
    n = 0
    try:
        with Path(path).open("rb") as raw:
            for n, line in enumerate(bounded_lines(gunzipped(raw), MAX_LINE_BYTES), 1):
                _line(out, fold, n, line)
    except OSError as exc:
        raise SliceError(f"{path}: {exc.strerror or exc}") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        out.problems.append(
            f"{path}: cut or corrupt after line {n} ({exc}); the lines before it are read"
        )
    out.lines, out.kept = n, fold.kept
    scrapes: list[MetricsScraped] = []
    for component, rows in fold.rows.items():
        scrapes += matrix_to_events(component, rows)
    out.events = thinned(merge_by_target(scrapes), step_s)
    stamps = [e.at for e in out.events]
    out.first, out.last = (min(stamps), max(stamps)) if stamps else (None, None)
    return out


def _line(out: SliceRead, fold: _Fold, n: int, line: bytes | None) -> None:
    if line is None:
        _bad(out, n, f"over {MAX_LINE_BYTES} bytes")
        return
    text = line.decode("utf-8", errors="replace").strip()
    if not text or text.startswith("#"):
        return
    try:
        name, labels, value, at = parse_sample(text)
    except SliceLineError as exc:
        _bad(out, n, str(exc))
        return
    fold.add(name, labels, value, at)


def _bad(out: SliceRead, n: int, why: str) -> None:
    out.malformed += 1
    if len(out.problems) < MAX_PROBLEMS:
        out.problems.append(f"line {n}: {why}")


@dataclass
class SliceSource:
    """A slice's scrapes as a source (``ktop record --from-openmetrics``): what a slice
    cannot hold (the API's objects, the APF request dumps) said once as failed feeds.
    """

    read: SliceRead
    path: str
    batch_s: float = 60.0

    @property
    def name(self) -> str:
        """``openmetrics-slice``."""
        return "openmetrics-slice"

    async def run(self, emit: Emit) -> None:
        """Emit the scrapes in time order, a minute of them per batch."""
        start = self.read.first if self.read.first is not None else 0.0
        why = NOT_IN_HISTORY.replace("Prometheus history", "a metrics slice")
        emit([SourceStarted(start, "openmetrics-slice", self.path, why)])
        emit(from_metrics(start, "a metrics slice"))
        emit_batched(emit, self.read.events, start, self.batch_s)
