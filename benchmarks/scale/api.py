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


@dataclass(frozen=True)
class ListCost:
    """A whole paginated list: bytes decoded, bytes on the wire, requests, seconds."""

    decoded: int
    wire: int
    requests: int
    seconds: float


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
            cont = json.loads(body).get("metadata", {}).get("continue", "")
            if not cont:
                return ListCost(decoded, wire, requests, time.perf_counter() - t0)

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
