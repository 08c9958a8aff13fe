"""The dashboard's garbage collection policy: full collections on a clock only."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from ktop.gc_policy import NEVER, Collector


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)


def test_install_stops_pythons_full_collections_and_uninstall_gives_them_back(
    thresholds: tuple[int, int, int],
) -> None:
    c = Collector()
    c.install()
    assert gc.get_threshold() == (thresholds[0], thresholds[1], NEVER)
    c.install()  # twice: what is given back is still what Python had
    c.uninstall()
    assert gc.get_threshold() == thresholds


def test_cyclic_garbage_waits_for_the_clock_then_is_freed(
    thresholds: tuple[int, int, int],
) -> None:
    clock = Clock()
    c = Collector(every_s=300.0, clock=clock)
    c.install()
    gc.collect()
    gc.disable()  # only the collector's tick may free the cycle in this test
    try:
        cycle = Cycle()
        ref = weakref.ref(cycle)
        del cycle
        clock.now = 299.0
        assert not c.tick() and ref() is not None
        clock.now = 300.0
        assert c.tick() and ref() is None
        assert c.collections == 1 and c.last_pause_s >= 0.0
        clock.now = 450.0
        assert not c.tick()  # the next one is due 300 s after this one
        clock.now = 600.0
        assert c.tick() and c.collections == 2
    finally:
        gc.enable()
        c.uninstall()
