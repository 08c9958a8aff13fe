"""Response size cap, against a real local HTTP server (aiohttp's own test server)."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from ktop.sources.live.transport import ResponseTooLargeError, read_capped


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
            assert len(await read_capped(resp, "GET /metrics", limit=4 << 20)) == 3 << 20
