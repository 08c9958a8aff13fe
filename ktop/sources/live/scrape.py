"""Periodic reads of metrics endpoints and APF dumps.

Parsing happens in a worker thread: a kube-apiserver exposition can be
megabytes, and the filtered parse of the lines ktop keeps must not stall
the screen.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Awaitable, Callable, Collection

from ktop.model.apf_dump import ApfDumpError, parse_priority_levels
from ktop.model.apf_requests import ApfRequestsError, parse_requests
from ktop.model.events import (
    ApfDumpFailed,
    ApfDumpRead,
    ApfRequestsFailed,
    ApfRequestsRead,
    Event,
    MetricsScraped,
    ScrapeFailed,
    Target,
)
from ktop.model.exposition import ParsedExposition, parse_exposition
from ktop.model.wanted import FAMILIES
from ktop.scrub import Secrets
from ktop.sources.base import Emit

MAX_REASON_CHARS = 300
"""A failure shown in a pane is one line; library messages can be pages."""

Fetch = Callable[[], Awaitable[bytes | None]]
"""Reads an endpoint's body; raises on failure; None means "skip this round"."""


_UNTRUSTED = re.compile(r"certificate verify failed: ([^(')]+)")
"""An untrusted server certificate, as Python's ssl module words it (a wrapped error, as
requests' connection errors, puts it after a long URL)."""


def failure_reason(exc: BaseException, secrets: Secrets) -> str:
    """A short, specific reason for a failed read (at most one line), scrubbed with
    ``secrets`` (the session's) before it is cut, so that no known value is cut in two.
    """
    whole = secrets.scrub(exc).strip().replace("\n", " ")
    if (m := _UNTRUSTED.search(whole)) is not None:  # said first: a wrapped one ends with it
        why = m.group(1).strip()
        return f"TLS: certificate verify failed: {why} (give its CA)"[:MAX_REASON_CHARS]
    text = whole[:MAX_REASON_CHARS]
    name = type(exc).__name__
    if isinstance(exc, TimeoutError) and not text:
        return "timed out"
    return f"{name}: {text}" if text and name not in text else (text or name)


def _parse_metrics(body: bytes, families: Collection[str]) -> ParsedExposition:
    # Decoding and parsing both happen off the event loop: the body can be megabytes.
    return parse_exposition(body.decode("utf-8", "replace"), families)


async def _poll(
    fetch: Fetch,
    handle: Callable[[bytes], Awaitable[Event]],
    failed: Callable[[str], Event],
    emit: Emit,
    interval_s: float,
    secrets: Secrets,
) -> None:
    """Every ``interval_s``: fetch, turn the body into an event, or report why not."""
    while True:
        try:
            body = await fetch()
            if body is not None:
                emit([await handle(body)])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            emit([failed(failure_reason(exc, secrets))])
        await asyncio.sleep(interval_s)


async def scrape_metrics_loop(
    target: Target,
    fetch: Fetch,
    emit: Emit,
    clock: Callable[[], float],
    interval_s: float,
    rng: random.Random | None = None,
    *,
    secrets: Secrets,
) -> None:
    """Scrape ``target`` every ``interval_s`` until cancelled (failures scrubbed with
    ``secrets``).
    """
    rng = rng or random.Random()
    await asyncio.sleep(rng.uniform(0, min(1.0, interval_s / 4)))  # spread the targets
    families = FAMILIES[target.component]

    async def handle(body: bytes) -> Event:
        parsed = await asyncio.to_thread(_parse_metrics, body, families)
        return MetricsScraped(clock(), target, parsed.samples, parsed.errors)

    def failed(reason: str) -> Event:
        return ScrapeFailed(clock(), target, reason)

    await _poll(fetch, handle, failed, emit, interval_s, secrets)


async def apf_dump_loop(
    instance: str,
    fetch: Fetch,
    emit: Emit,
    clock: Callable[[], float],
    interval_s: float,
    *,
    secrets: Secrets,
) -> None:
    """Read an instance's ``dump_priority_levels`` every ``interval_s`` until cancelled."""

    async def handle(body: bytes) -> Event:
        text = body.decode("utf-8", "replace")
        try:
            return ApfDumpRead(clock(), instance, parse_priority_levels(text))
        except ApfDumpError as exc:
            return ApfDumpFailed(clock(), instance, f"unreadable dump: {exc}")

    def failed(reason: str) -> Event:
        return ApfDumpFailed(clock(), instance, reason)

    await _poll(fetch, handle, failed, emit, interval_s, secrets)


HeadFetch = Callable[[], Awaitable[tuple[bytes, bool] | None]]
"""Reads the beginning of an endpoint's body: the bytes and whether they were cut."""


async def apf_requests_loop(
    instance: str,
    fetch: HeadFetch,
    emit: Emit,
    clock: Callable[[], float],
    interval_s: float,
    *,
    secrets: Secrets,
) -> None:
    """Read an instance's ``dump_requests`` every ``interval_s`` until cancelled, folded
    per client off the event loop (a saturated level lists thousands of requests).
    """
    cut = False

    async def body() -> bytes | None:
        nonlocal cut
        got = await fetch()
        if got is None:
            return None
        data, cut = got
        return data

    async def handle(data: bytes) -> Event:
        at = clock()
        try:
            dump = await asyncio.to_thread(parse_requests, data.decode("utf-8", "replace"), at)
        except ApfRequestsError as exc:
            return ApfRequestsFailed(at, instance, f"unreadable request dump: {exc}")
        return ApfRequestsRead(
            at,
            instance,
            dump.talkers,
            dump.requests,
            dump.executing_listed,
            truncated=cut,
            skipped=dump.skipped,
        )

    def failed(reason: str) -> Event:
        return ApfRequestsFailed(clock(), instance, reason)

    await _poll(body, handle, failed, emit, interval_s, secrets)
