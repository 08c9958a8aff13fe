"""Response size cap and time limits, against a real local HTTP server (aiohttp's own
test server)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from ktop.sources.live import transport
from ktop.sources.live.body import ResponseTooLargeError, read_capped
from ktop.sources.live.client import ConnectError, Connection, probe
from ktop.sources.live.components import http_fetcher
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.transport import KubeTransport, RequestTimeoutError
from tests.unit.fake_kube import connect_by_kubeconfig


async def _big(request: web.Request) -> web.StreamResponse:
    if request.query.get("chunked"):
        resp = web.StreamResponse()
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for _ in range(3):
            await resp.write(b"x" * (1 << 20))
        await resp.write_eof()
        return resp
    return web.Response(body=b"x" * (3 << 20))


@pytest.mark.parametrize("chunked", [False, True])
async def test_a_body_over_the_limit_is_refused_and_the_limit_named(chunked: bool) -> None:
    app = web.Application()
    app.router.add_get("/metrics", _big)
    async with TestServer(app) as server, aiohttp.ClientSession() as session:
        url = server.make_url("/metrics" + ("?chunked=1" if chunked else ""))
        async with session.get(url) as resp:
            with pytest.raises(ResponseTooLargeError, match=r"larger than 1 MiB \(size limit\)"):
                await read_capped(resp, "GET /metrics", limit=1 << 20)
        async with session.get(url) as resp:
            body, wire = await read_capped(resp, "GET /metrics", limit=4 << 20)
            assert len(body) == wire == 3 << 20  # sent as is: as many bytes on the wire


# --------------------------------------------------------------------------
# Time limits: a server that accepts and then says nothing, until the test ends.


class Stall:
    """Routes that stall (headers sent or not) until released at the end of the test."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = 0

    async def silent(self, request: web.Request) -> web.StreamResponse:
        """Accept the request, send nothing."""
        self.entered += 1
        await self.release.wait()
        return web.Response(text="late")

    async def watch(self, request: web.Request) -> web.StreamResponse:
        """Open a watch stream (status and headers), then send nothing."""
        self.entered += 1
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        await self.release.wait()
        return resp

    async def version(self, request: web.Request) -> web.StreamResponse:
        return await self.silent(request)


@contextlib.asynccontextmanager
async def _stalling() -> AsyncIterator[tuple[TestServer, Stall]]:
    stall = Stall()
    app = web.Application()
    app.router.add_get("/version", stall.version)
    app.router.add_get("/api/v1/nodes", _watch_or_silent(stall))
    app.router.add_get("/metrics", stall.silent)
    server = TestServer(app)
    await server.start_server()
    try:
        yield server, stall
    finally:
        stall.release.set()
        await server.close()


def _watch_or_silent(stall: Stall) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def route(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") == "true":
            return await stall.watch(request)
        return await stall.silent(request)

    return route


async def _connection(server: TestServer, tmp_path: Path) -> Connection:
    url = str(server.make_url(""))
    return await connect_by_kubeconfig(url, tmp_path, "t0ken-for-the-stalling-server")


async def test_a_request_that_gets_no_answer_fails_at_its_limit_and_names_it(
    tmp_path: Path,
) -> None:
    async with _stalling() as (server, stall):
        conn = await _connection(server, tmp_path)
        try:
            t = KubeTransport(conn.api, CostMeter())
            started = time.monotonic()
            with pytest.raises(RequestTimeoutError) as err:
                await t.get("/api/v1/nodes", [("limit", 1)], timeout_s=0.3)
            assert time.monotonic() - started < 5  # the limit, not some default
            assert stall.entered == 1  # it was accepted: the request itself stalled
            assert str(err.value) == (
                "GET /api/v1/nodes did not answer within 0.3s (request time limit)"
            )
        finally:
            await conn.close()


async def test_a_watch_that_sends_nothing_fails_at_the_idle_limit_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "WATCH_READ_TIMEOUT_S", 0.3)
    async with _stalling() as (server, stall):
        conn = await _connection(server, tmp_path)
        try:
            t = KubeTransport(conn.api, CostMeter())
            with pytest.raises(RequestTimeoutError) as err:
                async with t.watch("/api/v1/nodes", [("resourceVersion", "1")]) as lines:
                    assert t.meter.open_watches == 1  # the stream opened, then went quiet
                    async for _ in lines:
                        pytest.fail("the stalling server sent a line")
            assert stall.entered == 1
            assert str(err.value) == "watch sent nothing for 0.3s (watch read time limit)"
        finally:
            await conn.close()


async def test_the_first_request_fails_at_the_connection_limit_and_names_it(
    tmp_path: Path,
) -> None:
    async with _stalling() as (server, stall):
        conn = await _connection(server, tmp_path)
        try:
            with pytest.raises(ConnectError) as err:
                await probe(conn, timeout_s=0.3)
            assert stall.entered == 1
            assert "did not answer within 0.3s (connection time limit)" in str(err.value)
        finally:
            await conn.close()


async def test_a_component_scrape_that_gets_no_answer_fails_at_its_limit() -> None:
    async with _stalling() as (server, stall), aiohttp.ClientSession() as session:
        url = str(server.make_url("/metrics"))
        fetch = http_fetcher(session, url, timeout_s=0.3)
        with pytest.raises(RequestTimeoutError) as err:
            await fetch()
        assert stall.entered == 1
        assert str(err.value) == f"GET {url} did not answer within 0.3s (request time limit)"
