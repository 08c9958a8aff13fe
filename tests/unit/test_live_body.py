"""Compressed responses: ktop asks for gzip, counts the bytes as sent and inflates them
within its limits. Against aiohttp's real test server, through the same client that
``ktop --context`` builds (a kubeconfig naming the server)."""

from __future__ import annotations

import gzip
import itertools
import json
import zlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import given, settings
from hypothesis import strategies as st

from ktop.sources.live.body import (
    ACCEPT_ENCODING,
    BodyDecoder,
    BodyEncodingError,
    ResponseTooLargeError,
    read_capped,
)
from ktop.sources.live.client import Connection
from ktop.sources.live.components import http_fetcher
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import connected

METRICS = b"".join(
    b'apiserver_request_total{verb="LIST",resource="nodes",code="200",n="%d"} %d\n' % (i, i * 7)
    for i in range(20_000)
)
"""A /metrics body that compresses as a real one does (repetitive names and labels)."""

NODES = [{"metadata": {"name": f"node-{i:05d}", "labels": {"zone": "a"}}} for i in range(2_000)]


class Server:
    """Routes that answer gzip-compressed bodies, and what the client asked for."""

    def __init__(self) -> None:
        self.accept_encoding: list[str] = []
        self.sent: dict[str, int] = {}
        """Bytes of each compressed body sent, by path (the independent count)."""

    def _gz(self, path: str, body: bytes, encoding: str = "gzip") -> web.Response:
        packed = gzip.compress(body) if encoding == "gzip" else body
        self.sent[path] = len(packed)
        return web.Response(body=packed, headers={"Content-Encoding": encoding})

    async def metrics(self, request: web.Request) -> web.Response:
        self.accept_encoding.append(request.headers.get("Accept-Encoding", ""))
        return self._gz("/metrics", METRICS)

    async def nodes(self, request: web.Request) -> web.StreamResponse:
        self.accept_encoding.append(request.headers.get("Accept-Encoding", ""))
        if request.query.get("watch") == "true":
            resp = web.StreamResponse(headers={"Content-Encoding": "gzip"})
            await resp.prepare(request)
            z = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)
            sent = 0
            for node in NODES[:300]:
                line = json.dumps({"type": "MODIFIED", "object": node}).encode() + b"\n"
                chunk = z.compress(line) + z.flush(zlib.Z_SYNC_FLUSH)
                sent += len(chunk)
                await resp.write(chunk)
            tail = z.flush()
            sent += len(tail)
            await resp.write(tail)
            self.sent["watch"] = sent
            await resp.write_eof()
            return resp
        body = json.dumps({"kind": "NodeList", "metadata": {}, "items": NODES}).encode()
        return self._gz("/api/v1/nodes", body)

    async def bomb(self, request: web.Request) -> web.Response:
        return self._gz("/bomb", b"\0" * (8 << 20))

    async def corrupt(self, request: web.Request) -> web.Response:
        return web.Response(body=gzip.compress(METRICS)[:-40], headers={"Content-Encoding": "gzip"})

    async def brotli(self, request: web.Request) -> web.Response:
        return self._gz("/br", b"not really brotli", encoding="br")


@asynccontextmanager
async def _served() -> AsyncIterator[tuple[TestServer, Server]]:
    routes = Server()
    app = web.Application()
    app.router.add_get("/metrics", routes.metrics)
    app.router.add_get("/api/v1/nodes", routes.nodes)
    app.router.add_get("/bomb", routes.bomb)
    app.router.add_get("/corrupt", routes.corrupt)
    app.router.add_get("/br", routes.brotli)
    server = TestServer(app)
    async with server:
        yield server, routes


def _connected(server: TestServer, tmp_path: Path) -> AbstractAsyncContextManager[Connection]:
    return connected(str(server.make_url("")), tmp_path, "t0ken-for-the-gzip-server")


async def test_a_compressed_body_is_counted_as_sent_and_read_as_decoded(tmp_path: Path) -> None:
    async with _served() as (server, routes), _connected(server, tmp_path) as conn:
        meter = CostMeter()
        t = KubeTransport(conn.api, meter)
        resp = await t.get("/metrics", accept="text/plain")
        assert resp.body == METRICS
        assert routes.accept_encoding == [ACCEPT_ENCODING]
        assert meter.bytes_total == routes.sent["/metrics"]
        assert meter.decoded_total == len(METRICS)
        assert meter.bytes_total * 5 < len(METRICS)  # what the wire carried is far less
        page = await t.get("/api/v1/nodes", [("limit", 500)])
        assert [n["metadata"]["name"] for n in page.json()["items"]] == [
            n["metadata"]["name"] for n in NODES
        ]
        assert meter.bytes_total == routes.sent["/metrics"] + routes.sent["/api/v1/nodes"]


async def test_a_compressed_watch_stream_is_read_line_by_line(tmp_path: Path) -> None:
    async with _served() as (server, routes), _connected(server, tmp_path) as conn:
        meter = CostMeter()
        t = KubeTransport(conn.api, meter)
        names = []
        async with t.watch("/api/v1/nodes", [("resourceVersion", "1")]) as lines:
            async for line in lines:
                names.append(json.loads(line)["object"]["metadata"]["name"])
        assert names == [n["metadata"]["name"] for n in NODES[:300]]
        assert meter.bytes_total == routes.sent["watch"]


async def test_a_head_of_a_compressed_body_is_cut_after_whole_decoded_lines(
    tmp_path: Path,
) -> None:
    async with _served() as (server, _), _connected(server, tmp_path) as conn:
        t = KubeTransport(conn.api, CostMeter())
        resp, cut = await t.get_head("/metrics", [], 100_000)
        assert cut
        assert resp.body == METRICS[: METRICS.rfind(b"\n", 0, 100_000) + 1]
        whole, cut = await t.get_head("/metrics", [], 10 * len(METRICS))
        assert not cut and whole.body == METRICS


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("/bomb", ResponseTooLargeError, r"GET /bomb: response larger than 1 MiB \(size limit\)"),
        ("/corrupt", BodyEncodingError, r"GET /corrupt: compressed body (is corrupt|ends early)"),
        ("/br", BodyEncodingError, r"GET /br: body sent as 'br', which ktop did not ask for"),
    ],
)
async def test_a_body_that_does_not_decode_within_its_limit_is_refused_by_name(
    path: str, error: type[Exception], message: str
) -> None:
    limit = 1 << 20 if path == "/bomb" else 4 << 20
    async with (
        _served() as (server, _),
        aiohttp.ClientSession(auto_decompress=False) as session,
        session.get(server.make_url(path)) as resp,
    ):
        with pytest.raises(error, match=message):
            await read_capped(resp, f"GET {path}", limit=limit, decode=True)


async def test_a_component_scrape_counts_the_compressed_bytes() -> None:
    async with _served() as (server, routes), aiohttp.ClientSession(auto_decompress=False) as s:
        meter = CostMeter()
        fetch = http_fetcher(s, str(server.make_url("/metrics")), meter=meter, destination="etcd")
        assert await fetch() == METRICS
        assert routes.accept_encoding == [ACCEPT_ENCODING]
        assert meter.bytes_by_destination == {"etcd": routes.sent["/metrics"]}


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=20_000),
    cuts=st.lists(st.integers(min_value=0, max_value=30_000), max_size=8),
    compress=st.booleans(),
)
def test_a_body_decodes_the_same_however_it_is_cut_into_chunks(
    data: bytes, cuts: list[int], compress: bool
) -> None:
    sent = gzip.compress(data) if compress else data
    bounds = sorted({0, len(sent), *(c for c in cuts if c < len(sent))})
    decoder = BodyDecoder("gzip" if compress else "", "GET /x", limit=len(data))
    out = b"".join(decoder.feed(sent[a:b]) for a, b in itertools.pairwise(bounds))
    out += decoder.finish()
    assert out == data
    assert decoder.wire == len(sent)


@settings(max_examples=40, deadline=None)
@given(data=st.binary(min_size=1, max_size=5_000), flip=st.integers(min_value=0))
def test_a_damaged_compressed_body_is_an_error_or_its_own_bytes_never_a_crash(
    data: bytes, flip: int
) -> None:
    sent = bytearray(gzip.compress(data))
    sent[flip % len(sent)] ^= 0xFF
    decoder = BodyDecoder("gzip", "GET /x", limit=1 << 20)
    try:
        decoder.feed(bytes(sent))
        decoder.finish()
    except (BodyEncodingError, ResponseTooLargeError) as exc:
        assert str(exc).startswith("GET /x: ")
