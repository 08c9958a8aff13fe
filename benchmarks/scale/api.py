"""A small raw HTTP client for the lab's apiserver: create objects, measure lists and watches."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp

from ktop.sources.live.body import ACCEPT_ENCODING, read_capped

JSON = "application/json"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PARTIAL = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOBUF_MAGIC = b"k8s\x00"
"""The four bytes before every Kubernetes protobuf body (a ``runtime.Unknown`` message)."""
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""The annotation of the bookmark that ends a streaming list's initial events."""


@dataclass(frozen=True)
class ListCost:
    """A whole paginated list: bytes decoded, bytes on the wire, requests, seconds."""

    decoded: int
    wire: int
    requests: int
    seconds: float


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    """A protobuf varint at ``i``; (value, next index)."""
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _field(buf: bytes, number: int) -> bytes | None:
    """The first length-delimited field ``number`` of a protobuf message, or None."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        wire_type = key & 7
        if wire_type == 0:
            _, i = _varint(buf, i)
        elif wire_type == 1:
            i += 8
        elif wire_type == 5:
            i += 4
        elif wire_type == 2:
            size, i = _varint(buf, i)
            if key >> 3 == number:
                return buf[i : i + size]
            i += size
        else:
            raise ValueError(f"protobuf wire type {wire_type} not expected in a list")
    return None


def protobuf_continue(body: bytes) -> str:
    """The continue token of a list in Kubernetes' protobuf encoding: the magic, then a
    ``runtime.Unknown`` whose field 2 holds the list, whose field 1 is its ``ListMeta``,
    whose field 3 is ``continue`` (``k8s.io/apimachinery`` generated.proto). Read with
    four fields, not generated code: the benchmark only needs the token to page.
    """
    if not body.startswith(PROTOBUF_MAGIC):
        raise ValueError("not a Kubernetes protobuf body")
    raw = _field(body[len(PROTOBUF_MAGIC) :], 2) or b""
    meta = _field(raw, 1) or b""
    token = _field(meta, 3)
    return token.decode() if token else ""


@dataclass(frozen=True)
class Server:
    """Where the apiserver is and how to authenticate."""

    url: str
    token: str
    ca_file: str


class Api:
    """Raw requests over one aiohttp session."""

    def __init__(self, server: Server, connections: int = 32) -> None:
        self.server = server
        ctx = ssl.create_default_context(cafile=server.ca_file)
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=ctx, limit=connections),
            headers={"Authorization": f"Bearer {server.token}", "User-Agent": "ktop-bench"},
            timeout=aiohttp.ClientTimeout(total=None, sock_read=120),
        )

    async def close(self) -> None:
        """Close the session."""
        await self.session.close()

    async def request(
        self, method: str, path: str, body: Any = None, content_type: str = JSON
    ) -> tuple[int, bytes]:
        """One request; (status, body)."""
        data = None if body is None else json.dumps(body)
        async with self.session.request(
            method, self.server.url + path, data=data, headers={"Content-Type": content_type}
        ) as resp:
            return resp.status, await resp.read()

    async def create(self, path: str, body: Any, retries: int = 8) -> None:
        """POST ``body``; an existing object (409) is fine; 429/5xx are retried."""
        for attempt in range(retries):
            status, text = await self.request("POST", path, body)
            if status in (200, 201, 409):
                return
            if status not in (429, 500, 503, 504) and not (
                status == 403 and b"serviceaccount" in text
            ):
                raise RuntimeError(f"POST {path}: {status} {text[:300]!r}")
            await asyncio.sleep(0.2 * 2**attempt)
        raise RuntimeError(f"POST {path}: still failing after {retries} tries")

    async def list_bytes(
        self, path: str, accept: str, query: str = "", limit: int = 500
    ) -> ListCost:
        """What a whole paginated list costs in one representation, asked for gzip as
        kubectl and ktop ask: bytes decoded and bytes on the wire.
        """
        decoded, wire, requests, cont = 0, 0, 0, ""
        t0 = time.perf_counter()
        while True:
            url = f"{self.server.url}{path}?limit={limit}&{query}"
            url += f"&continue={cont}" if cont else ""
            headers = {"Accept": accept, "Accept-Encoding": ACCEPT_ENCODING}
            async with self.session.get(url, headers=headers, auto_decompress=False) as resp:
                body, sent = await read_capped(resp, f"GET {path}", decode=True)
                if resp.status != 200:
                    raise RuntimeError(f"GET {path} as {accept}: {resp.status} {body[:200]!r}")
            decoded += len(body)
            wire += sent
            requests += 1
            if accept == PROTOBUF:
                cont = protobuf_continue(body)
            else:
                cont = json.loads(body).get("metadata", {}).get("continue", "")
            if not cont:
                return ListCost(decoded, wire, requests, time.perf_counter() - t0)

    async def streaming_list_bytes(self, path: str, accept: str, query: str = "") -> ListCost:
        """What a streaming list costs (a watch with ``sendInitialEvents``, KEP-3157):
        every object as an ADDED event, then a bookmark annotated
        :data:`INITIAL_EVENTS_END`. Bytes as on the wire (gzip asked for; the apiserver
        does not compress watches) until that bookmark. Raises with the apiserver's
        answer when it does not offer streaming lists.
        """
        url = (
            f"{self.server.url}{path}?watch=true&sendInitialEvents=true"
            f"&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&{query}"
        )
        headers = {"Accept": accept, "Accept-Encoding": ACCEPT_ENCODING}
        t0 = time.perf_counter()
        wire = 0
        async with self.session.get(url, headers=headers, auto_decompress=False) as resp:
            if resp.status != 200:
                body = await resp.read()
                raise RuntimeError(f"streaming list {path}: {resp.status} {body[:200]!r}")
            if resp.headers.get("Content-Encoding"):
                raise RuntimeError(f"streaming list {path}: a compressed watch, not counted")
            async for line in resp.content:
                wire += len(line)
                if b'"BOOKMARK"' in line and INITIAL_EVENTS_END.encode() in line:
                    return ListCost(wire, wire, 1, time.perf_counter() - t0)
        raise RuntimeError(f"streaming list {path}: ended before {INITIAL_EVENTS_END}")

    @asynccontextmanager
    async def watch(
        self, path: str, query: str, accept: str
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """A watch stream from now on (``resourceVersion=0`` skipped: only new events)."""
        _status, body = await self.request("GET", f"{path}?limit=1&{query}")
        rv = json.loads(body)["metadata"]["resourceVersion"]
        url = f"{self.server.url}{path}?watch=true&resourceVersion={rv}&{query}"
        async with self.session.get(url, headers={"Accept": accept}) as resp:

            async def lines() -> AsyncIterator[bytes]:
                async for line in resp.content:
                    yield line

            yield lines()


async def limited(jobs: Iterable[Callable[[], Awaitable[None]]], concurrency: int) -> None:
    """Run ``jobs`` (made lazily, one at a time) with at most ``concurrency`` in flight."""
    it = iter(jobs)

    async def worker() -> None:
        for job in it:
            await job()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


Progress = Callable[[str], None]
