"""Periodic reads of metrics endpoints and APF dumps.

Parsing happens in a worker thread: a kube-apiserver exposition can be
megabytes, and the filtered parse of the lines ktop keeps must not stall
the screen.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

from ktop.model.apf_dump import ApfDumpError, parse_priority_levels
from ktop.model.events import (
    ApfDumpFailed,
    ApfDumpRead,
    MetricsScraped,
    ScrapeFailed,
    Target,
)
from ktop.model.exposition import parse_exposition
from ktop.model.wanted import FAMILIES
from ktop.sources.base import Emit

Fetch = Callable[[], Awaitable[str | None]]
"""Reads an endpoint's text; raises on failure; None means "skip this round"."""


def failure_reason(exc: BaseException) -> str:
    """A short, specific reason for a failed read."""
    text = str(exc).strip()
    name = type(exc).__name__
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return "timed out"
    return f"{name}: {text}" if text and name not in text else (text or name)


async def scrape_metrics_loop(
    target: Target,
    fetch: Fetch,
    emit: Emit,
    clock: Callable[[], float],
    interval_s: float,
    rng: random.Random | None = None,
) -> None:
    """Scrape ``target`` every ``interval_s`` until cancelled."""
    rng = rng or random.Random()
    await asyncio.sleep(rng.uniform(0, min(1.0, interval_s / 4)))  # spread the targets
    families = FAMILIES[target.component]
    while True:
        try:
            text = await fetch()
            if text is None:
                await asyncio.sleep(interval_s)
                continue
            parsed = await asyncio.to_thread(parse_exposition, text, families)
            emit([MetricsScraped(clock(), target, parsed.samples, parsed.errors)])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            emit([ScrapeFailed(clock(), target, failure_reason(exc))])
        await asyncio.sleep(interval_s)


async def apf_dump_loop(
    instance: str,
    fetch: Fetch,
    emit: Emit,
    clock: Callable[[], float],
    interval_s: float,
) -> None:
    """Read an instance's ``dump_priority_levels`` every ``interval_s`` until cancelled."""
    while True:
        try:
            text = await fetch()
            if text is None:
                await asyncio.sleep(interval_s)
                continue
            emit([ApfDumpRead(clock(), instance, parse_priority_levels(text))])
        except asyncio.CancelledError:
            raise
        except ApfDumpError as exc:
            emit([ApfDumpFailed(clock(), instance, f"unreadable dump: {exc}")])
        except Exception as exc:
            emit([ApfDumpFailed(clock(), instance, failure_reason(exc))])
        await asyncio.sleep(interval_s)
