"""Running sources into a hub until a stop condition: the one run loop of the commands
without a screen (``ktop record``, ``ktop snapshot``, ``ktop triage``).

:func:`running` starts every source with the hub's ``ingest`` as its ``emit`` and, when
its block ends, cancels those still running; :meth:`Run.until` waits, inside it, for the
first of its stop conditions (it can be called again: a second wait on the same sources):

======================  ==========================================================
:class:`Duration`       so much source time since the first event (after a batch)
:class:`Deadline`       so much wall time since the wait began (after a tick)
:class:`Signals`        SIGTERM, SIGHUP or SIGINT (:data:`STOP_SIGNALS`)
:class:`EndOfSource`    every source has ended (returned or raised)
:class:`Verdict`        a check gives a reason (after every batch and tick): a sink's
                        verdict, such as a recorder that stopped by itself
======================  ==========================================================

Once a stop is decided, later batches are not folded: the batch that met it is the last.
:func:`run_until` is the whole of it for one source and no tick.

The signals: Python's default for SIGTERM and SIGHUP ends the process at once: no
``finally`` runs, so the terminal is left in the app's modes and the always-on recording
is left without its index (its journal is put back by the next session). While a
dashboard, ``ktop fleet`` or ``ktop record`` runs, each of these signals instead asks it to
stop as ``q`` (or the end of ``--duration``) does, on the event loop
(:func:`stop_on_signals`): the app exits, its recorders are finished and released, and the
command returns. Textual installs handlers only for SIGTSTP, SIGCONT and SIGWINCH, so
these are left to ktop.

Stopping is bounded (:func:`run_loop`, :func:`stopping_note`): a command's event loop ends
without waiting for its worker threads (a publish or a seek in progress computes what
nobody will read; what ktop writes, it writes on the loop), and while a dashboard gives
back the screen and closes its recordings the terminal says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from ktop.hub import Hub
from ktop.model.events import Event
from ktop.sources.base import Source

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""The signals that stop a running command cleanly."""

T = TypeVar("T")


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new event loop, as ``asyncio.run`` does, but end without waiting
    for the loop's worker threads.

    ``asyncio.run`` joins every thread of the default executor before it returns; a
    thread still folding a 100,000-node snapshot or seeking in a recording would hold the
    quit for as long as that takes. Here the tasks left are cancelled and awaited (they
    run on the loop: sources closing, recorders finishing), asynchronous generators
    closed, and the executor told to drop what has not started; a thread still running
    ends with the process (:mod:`ktop.console`).
    """
    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix="ktop-worker")
    loop.set_default_executor(executor)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
            asyncio.set_event_loop(None)
            loop.close()


STOPPING = "stopping..."
"""What the terminal shows between the screen given back and the command's end (ASCII:
written after the app's screen, outside ``--ascii``'s filter, to any terminal)."""


@contextlib.contextmanager
def stopping_note(command: str, stream: TextIO | None = None) -> Iterator[None]:
    """Say ``COMMAND: stopping...`` on the terminal while the block runs (closing sources
    and recordings after the screen was given back), and erase it at its end; nothing
    when ``stream`` (standard error by default) is not a terminal.
    """
    out = sys.stderr if stream is None else stream
    shown = out.isatty()
    if shown:
        out.write(f"\r{command}: {STOPPING}")
        out.flush()
    try:
        yield
    finally:
        if shown:
            out.write("\r\x1b[K")
            out.flush()


@contextlib.contextmanager
def stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Call ``stop`` on the running event loop when one of :data:`STOP_SIGNALS` arrives,
    while the block runs (where the loop cannot watch signals, their defaults stay).
    """
    loop = asyncio.get_running_loop()
    watched = []
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop)
            watched.append(sig)
    try:
        yield
    finally:
        for sig in watched:
            loop.remove_signal_handler(sig)


@dataclass(frozen=True, slots=True)
class Duration:
    """Stop once ``seconds`` of source time passed since the first event folded."""

    seconds: float
    reason: str


@dataclass(frozen=True, slots=True)
class Deadline:
    """Stop once ``seconds`` passed on ``clock`` since the wait began (checked after each
    tick; a wait with a tick never sleeps past it).
    """

    seconds: float
    reason: str = "deadline"
    clock: Callable[[], float] = time.monotonic


@dataclass(frozen=True, slots=True)
class Signals:
    """Stop when one of :data:`STOP_SIGNALS` arrives."""

    reason: str = "interrupted"


@dataclass(frozen=True, slots=True)
class EndOfSource:
    """Stop when every source has ended, returned or raised (:attr:`Run.failures`)."""

    reason: str = "the source ended"


@dataclass(frozen=True, slots=True)
class Verdict:
    """Stop when ``check`` gives a reason (None: go on)."""

    check: Callable[[], str | None]


StopCondition = Duration | Deadline | Signals | EndOfSource | Verdict
"""One way a wait ends; a wait takes several, the first met ends it."""

Tick = Callable[[], Awaitable[object]]
"""Run every so often while a wait lasts (a publish: a history frame)."""


@dataclass(eq=False)
class Run:
    """Sources running into a hub (:func:`running`)."""

    hub: Hub
    started: float | None = None
    """The source time of the first event folded (None: none yet)."""
    failures: list[tuple[Source, Exception]] = field(default_factory=list)
    """The sources that raised, in the order they did."""
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _stops: Sequence[StopCondition] = ()
    _reason: str | None = None
    _woken: asyncio.Event = field(default_factory=asyncio.Event)

    def emit(self, events: Sequence[Event]) -> None:
        """Fold a batch (every source's ``emit``), then check the batch's conditions;
        nothing once a stop is decided.
        """
        if self._reason is not None or not events:
            return
        self.hub.ingest(events)
        if self.started is None:
            self.started = min(e.at for e in events)
        for stop in self._stops:
            if isinstance(stop, Duration) and self.hub.now - self.started >= stop.seconds:
                self._stop(stop.reason)
        self._check_verdicts()

    @property
    def ended(self) -> bool:
        """Whether every source has ended."""
        return all(t.done() for t in self._tasks)

    def _stop(self, reason: str) -> None:
        if self._reason is None:
            self._reason = reason
            self._woken.set()

    def _check_verdicts(self) -> None:
        for stop in self._stops:
            if isinstance(stop, Verdict) and (reason := stop.check()) is not None:
                self._stop(reason)

    def start(self, sources: Sequence[Source]) -> None:
        """Run each of ``sources`` in a task of its own, emitting into :meth:`emit`."""
        for source in sources:
            task = asyncio.create_task(source.run(self.emit))
            task.add_done_callback(functools.partial(self._ended, source))
            self._tasks.append(task)

    async def stop_sources(self) -> None:
        """Cancel the sources still running and wait until they have stopped."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _ended(self, source: Source, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            assert isinstance(exc, Exception)
            self.failures.append((source, exc))
        if self.ended:
            for stop in self._stops:
                if isinstance(stop, EndOfSource):
                    self._stop(stop.reason)

    async def until(
        self, *stops: StopCondition, every: float | None = None, tick: Tick | None = None
    ) -> str:
        """Wait for the first of ``stops``; its reason. With a ``tick``, run it every
        ``every`` seconds meanwhile, and once more after a stop that came between ticks
        (the state a run stops on is a tick's, at least one).
        """
        self._stops, self._reason = stops, None
        self._woken.clear()
        deadlines = [(d, d.clock() + d.seconds) for d in stops if isinstance(d, Deadline)]
        self._check_verdicts()
        for stop in stops:
            if isinstance(stop, EndOfSource) and self.ended:
                self._stop(stop.reason)
        with self._signals(stops):
            while True:
                if self._reason is None:
                    await self._wait(every, deadlines)
                if tick is not None:
                    await tick()
                self._check_verdicts()
                for d, end in deadlines:
                    if d.clock() >= end:
                        self._stop(d.reason)
                if self._reason is not None:
                    return self._reason

    async def _wait(self, every: float | None, deadlines: list[tuple[Deadline, float]]) -> None:
        """Until a stop wakes the run, ``every`` seconds pass, or the nearest deadline."""
        wait = every
        for d, end in deadlines:
            left = max(0.0, end - d.clock())
            wait = left if wait is None else min(wait, left)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._woken.wait(), wait)

    @contextlib.contextmanager
    def _signals(self, stops: Sequence[StopCondition]) -> Iterator[None]:
        """Watch :data:`STOP_SIGNALS` while the block runs, if ``stops`` has :class:`Signals`."""
        signalled = [s for s in stops if isinstance(s, Signals)]
        if not signalled:
            yield
            return
        with stop_on_signals(functools.partial(self._stop, signalled[0].reason)):
            yield


@contextlib.asynccontextmanager
async def running(sources: Sequence[Source], hub: Hub) -> AsyncIterator[Run]:
    """Run ``sources`` into ``hub`` while the block runs; cancel those left at its end."""
    run = Run(hub)
    run.start(sources)
    try:
        yield run
    finally:
        await run.stop_sources()


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended: the reason, and the source time of its first event."""

    reason: str
    started: float | None


async def run_until(source: Source, hub: Hub, *stops: StopCondition) -> RunResult:
    """Run ``source`` into ``hub`` until the first of ``stops``."""
    async with running([source], hub) as run:
        reason = await run.until(*stops)
    return RunResult(reason, run.started)
