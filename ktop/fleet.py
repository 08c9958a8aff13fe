"""The fleet: one hub per cell, and the fleet view drawn from all of them.

A cell is a name and a factory that opens its sources (connecting and
probing a live cluster, or building a simulator). Each cell folds its own
events into its own :class:`~ktop.hub.Hub`; :meth:`Fleet.refresh` publishes
every hub, triages each new snapshot and draws the fleet view with
:mod:`ktop.analysis.fleet`. A cell that cannot be opened, or whose source
fails, stays in the view as unknown with the reason.

Each cell reads its own credentials into its own :class:`~ktop.scrub.Secrets`, a
:meth:`~ktop.scrub.Secrets.child` of the fleet's (the session's): its hub scrubs its
events with them, and the fleet's own text (a cell's failure in the fleet view, and the
log and crash report of the process) is scrubbed with the fleet's, which holds every
cell's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from ktop.analysis.fleet import (
    CellSummary,
    Onsets,
    SharedCause,
    correlate,
    rank,
    summarize,
    track_onsets,
    unreachable,
)
from ktop.hub import Hub, HubPolicy
from ktop.model.cluster import ClusterModel
from ktop.model.events import Event
from ktop.model.model_inputs import ModelConfig
from ktop.scrub import Secrets
from ktop.sources.base import Source

CONNECTING = "connecting"
"""The reason a cell shows until its source has delivered its first events."""


class CellUnavailableError(Exception):
    """A cell's sources could not be opened; the message says why (already scrubbed)."""


async def _nothing_to_close() -> None:
    return None


@dataclass(frozen=True, slots=True)
class OpenedCell:
    """A cell's running sources and how to release what they hold afterwards."""

    sources: Sequence[Source]
    close: Callable[[], Awaitable[None]] = _nothing_to_close


@dataclass(frozen=True, slots=True)
class CellSpec:
    """A cell: a name and a factory that opens its sources.

    ``open`` connects (live) or builds (demo) and raises :class:`CellUnavailableError` with
    the reason when it cannot. ``clock`` is the cell's own clock, against which its data
    age is measured (the wall clock for live cells, the virtual clock for simulated ones).
    ``secrets`` are the cell's: what ``open`` reads is recorded into them (a child of the
    fleet's, so that the fleet's text is scrubbed of them too), and its hub scrubs with them.
    """

    name: str
    open: Callable[[], Awaitable[OpenedCell]]
    clock: Callable[[], float] = time.time
    rack_label: str = "topology.ktop.dev/rack"
    secrets: Secrets = field(default_factory=Secrets, repr=False)


@dataclass(frozen=True, slots=True)
class FleetView:
    """What the fleet screen shows: every cell worst first, and the causes they share."""

    cells: tuple[CellSummary, ...]
    shared: tuple[SharedCause, ...] = ()


@dataclass(eq=False)
class Cell:
    """One cell at run time: its spec, its hub, its last summary, its error."""

    spec: CellSpec
    fleet_secrets: Secrets = field(default_factory=Secrets, repr=False)
    """The fleet's (every cell's): the cell's error, shown in the fleet view, is scrubbed
    with them."""
    hub: Hub = field(init=False)
    error: str = CONNECTING
    """Why the cell is unknown; empty once its source delivers."""
    failed: bool = False
    """True when the error is a failure (not just 'connecting')."""

    def __post_init__(self) -> None:
        # each row and each cell's screens show its diagnosis: drawn as it is published
        policy = HubPolicy(self.spec.secrets, triage_on_publish=True)
        self.hub = Hub(ClusterModel(ModelConfig(rack_label=self.spec.rack_label)), policy)

    @property
    def name(self) -> str:
        """The cell's name."""
        return self.spec.name

    def ingest(self, events: Sequence[Event]) -> None:
        """Fold a batch into the cell's hub (a source's ``emit``)."""
        if not self.failed:
            self.error = ""
        self.hub.ingest(events)

    def summary(self) -> CellSummary:
        """Publish the hub (if anything changed) and summarise its latest snapshot, with
        the hub's triage report (the cell's own history is its baseline).
        """
        if self.error and self.hub.events_total == 0:
            return unreachable(self.name, self.error)
        if not self.hub.publishing:  # a publish in a worker thread is reading the model
            self.hub.publish()
        published = self.hub.latest
        return summarize(
            self.name,
            published.snapshot,
            published.findings,
            published.triage,
            now=self.spec.clock(),
            error=self.error,
        )

    async def run(self) -> None:
        """Open the cell's sources and run them until cancelled; failures become the
        cell's error (never raised: one cell must not stop the others).
        """
        try:
            opened = await self.spec.open()
        except CellUnavailableError as exc:  # scrubbed with the cell's; now with every cell's
            self.error, self.failed = self.fleet_secrets.scrub(exc), True
            return
        except Exception as exc:
            self.error, self.failed = self.fleet_secrets.scrub(f"{type(exc).__name__}: {exc}"), True
            return
        try:
            await asyncio.gather(*(s.run(self.ingest) for s in opened.sources))
        except Exception as exc:
            why = f"source failed: {type(exc).__name__}: {exc}"
            self.error, self.failed = self.fleet_secrets.scrub(why), True
        finally:
            await opened.close()


class Fleet:
    """Every cell, and the fleet view drawn at each refresh.

    ``secrets`` are the fleet's (the session's; default: a new instance): each cell's
    should be a :meth:`~ktop.scrub.Secrets.child` of them.
    """

    def __init__(self, specs: Sequence[CellSpec], secrets: Secrets | None = None) -> None:
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"cell names must be unique: {', '.join(names)}")
        self.secrets = secrets if secrets is not None else Secrets()
        self.cells = [Cell(s, fleet_secrets=self.secrets) for s in specs]
        self.onsets: Onsets = {}
        self.view = FleetView(tuple(unreachable(s.name, CONNECTING) for s in specs))

    def cell(self, name: str) -> Cell:
        """The cell called ``name`` (KeyError when there is none)."""
        for c in self.cells:
            if c.name == name:
                return c
        raise KeyError(name)

    def refresh(self) -> FleetView:
        """Summarise every cell, rank them, follow onsets and correlate."""
        summaries = [c.summary() for c in self.cells]
        self.onsets = track_onsets(self.onsets, summaries)
        self.view = FleetView(rank(summaries), correlate(summaries, self.onsets))
        return self.view
