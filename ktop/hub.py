"""The hub: the one stateful piece outside the UI, and the only place that folds events
and publishes snapshots.

Sources hand it batches of events; it folds them into the model, passes
them to sinks (the recorder), and on demand publishes a snapshot and the
findings analysis draws from it. It publishes at the screen's cadence, not
once per event: folding is cheap, snapshots are not.

A hub is built one way: a model and a :class:`HubPolicy` (the session's secrets, who
measured the history, whether each publish draws its triage at once, the first sinks),
fixed at construction. What changes while it runs goes through its methods: sinks added
and removed (a recording started or stopped), a listener of finished lists
(:meth:`Hub.listen_synced`), a replay's seek (:meth:`Hub.reset`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from ktop.analysis.findings import Finding, Severity
from ktop.analysis.rules import evaluate
from ktop.analysis.triage.baseline import HistoryKind, baseline_source
from ktop.analysis.triage.evaluate import triage
from ktop.analysis.triage.timeline import TimelineEvent, incident_timeline
from ktop.analysis.triage.types import Capacity, TriageReport
from ktop.model.audit_digest import AuditDigest
from ktop.model.cluster import ClusterModel
from ktop.model.events import ClockTick, Event, FeedSynced, SelfCost
from ktop.model.model_inputs import ModelConfig
from ktop.model.scrub_events import printable_text, scrub_event
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.state import Keyframe, keyframe_of
from ktop.scrub import Secrets

Sink = Callable[[Sequence[Event]], None]
"""Receives every batch of events, in order (the recorder is one)."""


@dataclass(frozen=True)
class Published:
    """A snapshot, the findings drawn from it and its triage report.

    The report is drawn the first time a view asks for it (and once per snapshot): a
    snapshot nobody triages costs nothing more than its findings.
    """

    snapshot: ClusterSnapshot
    findings: tuple[Finding, ...]
    history: HistoryKind | None = HistoryKind.THIS_RUN
    """Who measured the snapshot's history: the baseline triage names (None: there is no
    history to take a baseline from, an offline bundle's one capture)."""
    markers: tuple[tuple[float, str], ...] = ()
    """The recording's markers (time, note) known when it was published."""
    capacity: tuple[Capacity, ...] = ()
    """Sizes the report carries beside its verdicts (a bundle's full LIST sizes)."""
    audit: AuditDigest | None = None
    """What the apiservers' audit logs say about the same time (``--audit-log``)."""

    @cached_property
    def triage(self) -> TriageReport:
        """Every triage path's verdict on this snapshot, its history as the baseline (none
        without a history), with :attr:`capacity` and the critical findings beside it (the
        headline never says "no incident" beside one).
        """
        baseline = None if self.history is None else baseline_source(self.snapshot, self.history)
        critical = tuple(f for f in self.findings if f.severity is Severity.CRITICAL)
        report = triage(self.snapshot, baseline, self.capacity, self.audit)
        return replace(report, critical=critical)

    @cached_property
    def timeline(self) -> tuple[TimelineEvent, ...]:
        """What changed, oldest first: restarts, leader changes, zone transitions,
        threshold crossings, the diagnosis' onsets and the markers up to the snapshot.
        """
        return incident_timeline(self.snapshot, self.triage, self.markers)


@dataclass(frozen=True, slots=True)
class HubPolicy:
    """How a hub behaves, given when it is built (and never changed afterwards)."""

    secrets: Secrets = field(default_factory=Secrets)
    """The session's credentials: every event's free text is scrubbed with them before
    the model or a sink sees it, and the app scrubs the errors it shows with them
    (default: a new instance, which knows no value and removes the shapes only)."""
    history: HistoryKind | None = HistoryKind.THIS_RUN
    """Who measures the model's history (a replay's is the recording's; None: nobody, a
    bundle read once)."""
    triage_on_publish: bool = False
    """Draw each published snapshot's triage report and incident timeline as it is
    published (in the worker thread of :meth:`Hub.publish_off_loop`), for the screens that
    show them every frame."""
    sinks: tuple[Sink, ...] = ()
    """The sinks every batch goes to from the first (a recorder, which reads the hub's
    keyframes, is added once the hub exists: :meth:`Hub.add_sink`)."""


class Hub:
    """Merges sources, folds events, feeds sinks, publishes snapshots."""

    def __init__(self, model: ClusterModel | None = None, policy: HubPolicy | None = None) -> None:
        policy = policy if policy is not None else HubPolicy()
        self.model = model or ClusterModel()
        self.policy = policy
        """How this hub behaves (:class:`HubPolicy`)."""
        self._sinks = list(policy.sinks)
        self._latest: Published | None = None
        self._events_since_publish = 0
        self._data_since_publish = 0
        """Batches since the last publish with an event that says more than that time
        passed (:meth:`_kinds`)."""
        self._cost_key: tuple[str, str, int, int] | None = None
        self.events_total = 0
        self.sink_errors: list[str] = []
        self._held: list[Sequence[Event]] | None = None
        """While a publish runs in a worker thread: batches that arrived meanwhile."""
        self._done = asyncio.Event()
        self._markers: list[tuple[float, str]] = []
        self._synced_listeners: list[Callable[[], None]] = []

    @property
    def secrets(self) -> Secrets:
        """The session's credentials (:attr:`HubPolicy.secrets`)."""
        return self.policy.secrets

    @property
    def history(self) -> HistoryKind | None:
        """Who measures the model's history (:attr:`HubPolicy.history`)."""
        return self.policy.history

    def listen_synced(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (on the thread that folds) after every later batch in which a
        feed finished a whole list (:meth:`_news_of_sync`): the app publishes then instead
        of at its next refresh, so a list that completes shows complete at once, not up to
        a refresh interval later.
        """
        self._synced_listeners.append(listener)

    @property
    def markers(self) -> tuple[tuple[float, str], ...]:
        """The recording markers (time, note) every later snapshot's timeline shows."""
        return tuple(self._markers)

    def add_markers(self, markers: Sequence[tuple[float, str]]) -> None:
        """Show these markers on the timeline from the next publish on (a replay's, or
        one the user just added while recording). Their notes are shown with control
        characters escaped, as every event's text is.
        """
        notes = [(at, printable_text(note)) for at, note in markers]
        self._markers = sorted({*self._markers, *notes})
        self._events_since_publish += 1
        self._data_since_publish += 1

    def add_sink(self, sink: Sink) -> None:
        """Send every later batch to ``sink`` too."""
        self._sinks.append(sink)

    def remove_sink(self, sink: Sink) -> None:
        """Stop sending batches to ``sink`` (a recorder that stopped); nothing if absent."""
        if sink in self._sinks:
            self._sinks.remove(sink)

    def reset(self, model: ClusterModel) -> None:
        """Fold into ``model`` from now on (a replay seek); the next publish shows it."""
        self.model = model
        self._events_since_publish += 1
        self._data_since_publish += 1

    def ingest(self, events: Sequence[Event]) -> None:
        """Fold a batch of events into the model and hand it to the sinks (after the
        publish in flight, if one is: it is reading the model).
        """
        if not events:
            return
        if self._held is not None:
            self._held.append(events)
            return
        self._fold(events)

    def _fold(self, events: Sequence[Event]) -> None:
        events = [scrub_event(e, self.secrets) for e in events]
        synced = self._news_of_sync(events)
        self.model.apply_all(events)
        self._events_since_publish += len(events)
        only_time = self._only_time(events)
        if not only_time:
            self._data_since_publish += 1
        self.events_total += len(events)
        for sink in self._sinks:
            try:
                sink(events)
            except Exception as exc:  # a broken sink must not stop the dashboard
                self.sink_errors.append(self.secrets.scrub(f"{type(exc).__name__}: {exc}"))
        if synced:
            for listener in self._synced_listeners:
                listener()

    def _news_of_sync(self, events: Sequence[Event]) -> bool:
        """Whether a feed finished a whole list in the batch, read before it is folded:
        its first list, a relist, or its first success after a failure. A feed that
        says again that it is synced (the discovery and control-plane loops do so each
        round) is not news: its data waits for the refresh like any other.
        """
        feeds, listing = self.model.feeds, self.model.listing
        for e in events:
            if type(e) is FeedSynced:
                h = feeds.get(e.feed)
                if h is None or not h.synced or h.error or e.feed in listing:
                    return True
        return False

    def _only_time(self, events: Sequence[Event]) -> bool:
        """Whether the batch says only that time passed (clock ticks, and ktop's own cost
        whose rates moved on but whose flow schema, priority level, throttles and watches
        did not).
        """
        only = True
        for e in events:
            kind = type(e)
            if kind is SelfCost:
                assert isinstance(e, SelfCost)
                key = (e.priority_level, e.flow_schema, e.throttled_total, e.open_watches)
                only = only and key == self._cost_key
                self._cost_key = key
            elif kind is not ClockTick:
                only = False
        return only

    def publish(self, *, force: bool = False) -> Published | None:
        """A new snapshot and findings if anything changed since the last call."""
        if not force and self._events_since_publish == 0 and self._latest is not None:
            return None
        folded, data = self._events_since_publish, self._data_since_publish
        snapshot = self.model.observe()
        self._latest = Published(snapshot, evaluate(snapshot), self.history, tuple(self._markers))
        if self.policy.triage_on_publish:
            _ = self._latest.triage
            _ = self._latest.timeline
        self._events_since_publish -= folded
        self._data_since_publish -= data
        return self._latest

    @property
    def only_time_passed(self) -> bool:
        """Since the last publish, nothing but the clock (and ktop's own cost) changed."""
        return self._data_since_publish == 0 and self._latest is not None

    @property
    def now(self) -> float:
        """The source clock: the time of the latest event folded."""
        return self.model.now

    @property
    def config(self) -> ModelConfig:
        """The model's settings."""
        return self.model.config

    def keyframe(self) -> Keyframe:
        """The model's whole state now, for a recording: the one way a sink reads more
        than the batches it is given (the model it reads follows :meth:`reset`). A sink is
        handed batches only while no publish runs in a worker thread; anyone else asking
        then is refused.
        """
        if self.publishing:
            raise RuntimeError("keyframe asked for while a publish reads the model")
        return keyframe_of(self.model)

    @property
    def publishing(self) -> bool:
        """True while :meth:`publish_off_loop` runs (the model must not be read or folded)."""
        return self._held is not None

    async def publish_off_loop(self) -> Published | None:
        """:meth:`publish` in a worker thread, so the event loop keeps rendering and reading.

        Batches that arrive meanwhile are held and folded, in order, once it is done; the
        model is only ever touched by one thread at a time.
        """
        if self._held is not None:
            return None
        self._held = []
        self._done.clear()
        try:
            return await asyncio.to_thread(self.publish)
        finally:
            held, self._held = self._held, None
            for batch in held:
                self._fold(batch)
            self._done.set()

    async def idle(self) -> None:
        """Wait until no publish runs in a worker thread (before reading the model)."""
        while self._held is not None:
            await self._done.wait()

    @property
    def latest(self) -> Published:
        """The last published snapshot (publishing one if none exists yet)."""
        if self._latest is None:
            published = self.publish(force=True)
            assert published is not None
            return published
        return self._latest
