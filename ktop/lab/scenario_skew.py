"""The apiserver-skew scenario: what a rolling restart leaves behind, made real in a lab.

When one apiserver of a pair restarts behind a load balancer, its clients reconnect to
the one that stayed up, and their watches (HTTP/2 streams that live for hours) stay there:
one instance holds nearly every watch and serves most requests, the other sits near zero.
The lab's clients are pinned to one apiserver each (no load balancer), so the scenario
plays the clients that failed over: it restarts one apiserver, then holds watches and
keeps requests on the other, enough that the skew (``ktop/model/area_apiservers.py``)
passes twice its critical limit, for as long as it is told.
"""

from __future__ import annotations

import asyncio
import math
import re
import ssl
import time
from typing import Any

import aiohttp

from ktop.lab import procs
from ktop.lab.target import LabTarget
from ktop.lab.util import http_get, http_ok, wait_for
from ktop.model.limits import API_SKEW, SKEW_FLOOR

READY_LIMIT_S = 120.0
"""The longest the scenario waits for the restarted apiserver's ``/readyz``."""
HOLD_S = 60.0
"""How long the load stays on the instance that stayed up, once the other is ready again
(when no duration is given)."""
SKEW_AIM = 2.0
"""The watches held aim at this many times the critical skew limit."""
MAX_WATCHES = 5000
"""The most watches the scenario opens, whatever the lab's own count."""
REQUEST_CONNS = 8
"""Keep-alive connections that send cheap GETs to the instance that stayed up."""
OPEN_AT_ONCE = 50
"""Watches opened concurrently (not all in one burst)."""

_WATCH_LINE = re.compile(r"^apiserver_longrunning_requests\{([^}]*)\}\s+(\S+)", re.MULTILINE)


def registered_watches(metrics_text: str) -> float:
    """The watches an apiserver holds: ``apiserver_longrunning_requests{verb="WATCH"}``
    summed over its series.
    """
    return sum(
        float(value)
        for labels, value in _WATCH_LINE.findall(metrics_text)
        if 'verb="WATCH"' in labels
    )


def watches_to_open(held: float, peers: list[float]) -> int:
    """Watches to open on the instance that holds ``held`` so that it holds
    :data:`SKEW_AIM` times the critical skew against the mean of ``peers`` (each at least
    the skew floor), at most :data:`MAX_WATCHES`.
    """
    peer_mean = max(sum(peers) / len(peers), SKEW_FLOOR) if peers else SKEW_FLOOR
    assert API_SKEW.critical is not None
    wanted = SKEW_AIM * API_SKEW.critical * peer_mean - held
    return max(0, min(MAX_WATCHES, math.ceil(wanted)))


def _watches_of(url: str, token: str) -> float:
    status, body = http_get(f"{url}/metrics", token)
    return registered_watches(body.decode("utf-8", "replace")) if status == 200 else 0.0


async def _hold(url: str, token: str, watches: int, stop: asyncio.Event) -> tuple[int, int]:
    """Hold ``watches`` watches on ``url`` and keep :data:`REQUEST_CONNS` connections busy
    with cheap GETs until ``stop`` is set; return (watches opened, requests served).
    """
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    connector = aiohttp.TCPConnector(ssl=ctx, limit=watches + REQUEST_CONNS)
    headers = {"Authorization": f"Bearer {token}"}
    opened = served = 0
    gate = asyncio.Semaphore(OPEN_AT_ONCE)
    watch_url = f"{url}/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=3600"
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def watch() -> None:
            nonlocal opened
            while not stop.is_set():
                try:
                    async with gate:
                        resp = await session.get(watch_url, timeout=aiohttp.ClientTimeout())
                    async with resp:
                        opened += 1
                        await stop.wait()
                except aiohttp.ClientError:
                    await asyncio.sleep(1.0)

        async def hammer() -> None:
            nonlocal served
            while not stop.is_set():
                try:
                    async with session.get(f"{url}/api/v1/namespaces/default") as resp:
                        await resp.read()
                        served += 1
                except aiohttp.ClientError:
                    await asyncio.sleep(0.1)

        await asyncio.gather(
            *(watch() for _ in range(watches)), *(hammer() for _ in range(REQUEST_CONNS))
        )
    return opened, served


async def apiserver_skew(
    target: LabTarget,
    restart: str = "apiserver-b",
    hold: str = "apiserver-a",
    duration_s: float | None = None,
) -> dict[str, Any]:
    """Restart apiserver ``restart``, then hold watches and requests on ``hold`` (as the
    clients that failed over would) for ``duration_s`` once ``restart`` is ready again
    (default :data:`HOLD_S`): the skew passes its critical limit the way a rolling
    restart's does, and the restart is recent.
    """
    lab_dir = target.require_lab_dir("apiserver-skew")
    assert target.info is not None
    urls = {a["name"]: a["url"] for a in target.info["apiservers"]}
    token = target.admin_token()
    counts = {name: await asyncio.to_thread(_watches_of, u, token) for name, u in urls.items()}
    opening = watches_to_open(counts[hold], [w for n, w in counts.items() if n != hold])
    stop = asyncio.Event()
    load = asyncio.create_task(_hold(urls[hold], token, opening, stop))
    try:
        await asyncio.to_thread(procs.restart, lab_dir, restart)
        await asyncio.to_thread(
            wait_for,
            lambda: http_ok(f"{urls[restart]}/readyz", token),
            timeout_s=READY_LIMIT_S,
            what=f"{restart} ready again",
        )
        ready = time.monotonic()
        await asyncio.sleep(HOLD_S if duration_s is None else max(0.0, duration_s))
        held_s = time.monotonic() - ready
    finally:
        stop.set()
        opened, served = await load
    return {
        "scenario": "apiserver-skew",
        "restarted": restart,
        "held": hold,
        "watches_before": counts,
        "watches_held": opened,
        "requests_to_held": served,
        "held_s": round(held_s, 1),
    }
