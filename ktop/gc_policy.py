"""When ktop's process collects its cyclic garbage.

Python's collector runs a *full* collection, which visits every object the process
holds, whenever the objects that survived the younger collections grow by a quarter.
ktop holds a record per node and per Lease: at 100,000 nodes a full collection takes
about 130 ms, and the garbage of every scrape and list page (parsed samples, decoded
pages) set one off every 12 s while nothing in the cluster changed (a fifth of ktop's
idle CPU), and 55 times while the lists of a first start were read.

:class:`Collector` leaves the young generations as Python sets them (they visit only
recent objects) and runs the full collection on a clock instead: every
:data:`FULL_EVERY_S`, from the refresh timer. Objects freed by their reference count
(nearly all of ktop's: records, snapshots, pages) are freed at once as before; only
garbage in reference cycles waits, at most that long.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

FULL_EVERY_S = 300.0
"""Seconds between full collections (one 130 ms pause at 100,000 nodes, 0.04% of a core)."""
NEVER = 2**31 - 1
"""A third-generation threshold no count reaches: no full collection but ours."""


class Collector:
    """Full collections on a clock; :meth:`install` once, :meth:`tick` from a timer."""

    def __init__(
        self, every_s: float = FULL_EVERY_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.every_s = every_s
        self.clock = clock
        self.due = clock() + every_s
        self.collections = 0
        """Full collections run by :meth:`tick`."""
        self.last_pause_s = 0.0
        """How long the last of them took (wall time)."""
        self._saved: tuple[int, int, int] | None = None

    def install(self) -> None:
        """Stop Python's own full collections (the young ones go on as set)."""
        young, middle, old = gc.get_threshold()
        if self._saved is None:
            self._saved = (young, middle, old)
        gc.set_threshold(young, middle, NEVER)

    def uninstall(self) -> None:
        """Give Python back the thresholds it had before :meth:`install`."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def tick(self) -> bool:
        """Run a full collection when one is due; whether one ran."""
        now = self.clock()
        if now < self.due:
            return False
        t0 = time.perf_counter()
        gc.collect()
        self.last_pause_s = time.perf_counter() - t0
        self.collections += 1
        self.due = now + self.every_s
        return True
