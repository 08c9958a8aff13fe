"""Supervised loops: each runs as one named task, and a failure that escapes it is
reported as an event for the pane that needed it, then the loop restarts after a
jittered back-off.

The live source starts and stops loops by key as instances and leaders come and go
(:class:`Supervisor`); what it reads is planned in :mod:`ktop.sources.live.source`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ktop.model.events import Event, FeedFailed, ScrapeFailed, Target
from ktop.scrub import Secrets
from ktop.sources.base import Emit
from ktop.sources.live.listwatch import Backoff
from ktop.sources.live.scrape import failure_reason

Factory = Callable[[], Coroutine[Any, Any, None]]
"""What makes one run of a loop."""
Report = Callable[[float, str], Sequence[Event]]
"""The events that report a loop's failure (at a time, with a reason)."""


def scrape_failed(target: Target) -> Report:
    """A dead scrape loop is reported as its target's failure (the target's panes)."""
    return lambda at, why: [ScrapeFailed(at, target, why)]


class Supervisor:
    """Named loops, each run once at a time, restarted after a failure (its reason
    scrubbed with ``secrets``, the session's).
    """

    def __init__(self, clock: Callable[[], float], rng: random.Random, secrets: Secrets) -> None:
        self.clock = clock
        self.rng = rng
        self.secrets = secrets
        self.emit: Emit = lambda events: None
        """Where failures are reported (the source sets it when it runs)."""
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._failed: set[str] = set()
        """Keys of loops whose failure was reported (see :meth:`recovered`)."""

    def start(self, key: str, factory: Factory, report: str | Report) -> None:
        """Run ``factory()`` as task ``key`` (once: a key already running is left alone).

        ``report`` is what a failure is reported as, so that it shows in the pane that
        needed the loop: a feed name (``FeedFailed``; one of the model's known feeds) or
        a function of the time and reason (e.g. :func:`scrape_failed` of its target).
        """
        if self.running(key):
            return
        self.tasks[key] = asyncio.create_task(
            self._supervise(key, factory, report), name=f"ktop-live-{key}"
        )

    def running(self, key: str) -> bool:
        """Whether loop ``key`` is running."""
        task = self.tasks.get(key)
        return task is not None and not task.done()

    def recovered(self, key: str) -> bool:
        """True once after a failure of loop ``key`` was reported (so that the loop can
        say it runs again); False otherwise.
        """
        if key in self._failed:
            self._failed.discard(key)
            return True
        return False

    async def _supervise(self, key: str, factory: Factory, report: str | Report) -> None:
        backoff = Backoff(rng=self.rng)
        while True:
            try:
                await factory()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                now, why = self.clock(), f"{key} stopped: {failure_reason(exc, self.secrets)}"
                self._failed.add(key)
                if isinstance(report, str):
                    self.emit([FeedFailed(now, report, why)])
                else:
                    self.emit(report(now, why))
                await asyncio.sleep(backoff.next_delay())

    def stop(self, key: str) -> None:
        """Cancel loop ``key`` (nothing when it is not running)."""
        task = self.tasks.pop(key, None)
        if task is not None:
            task.cancel()

    async def cancel_all(self) -> None:
        """Cancel every loop and wait until each has ended."""
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*tasks, return_exceptions=True)
