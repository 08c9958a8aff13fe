"""A fake of kubernetes-asyncio's ApiClient at the raw-request level, for the live source.

Only what cannot run without Go is faked: the apiserver's answers. The transport,
the cost meter, the list-watch loop and the source above them are the real code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes_asyncio.client import Configuration
from multidict import CIMultiDict

from ktop.scrub import Secrets
from ktop.sources.live.client import Connection, connect


@dataclass
class Answer:
    """One answer: a status and a body, or for a watch the lines of its stream."""

    status: int = 200
    body: Any = None
    lines: list[Any] | None = None
    hold: asyncio.Event | None = None
    """For watches: keep the stream open until this is set."""
    headers: dict[str, str] = field(default_factory=dict)


def status_body(code: int, message: str) -> dict[str, Any]:
    """A ``Status`` object as the apiserver sends it."""
    return {"kind": "Status", "code": code, "message": message}


class _Content:
    """``resp.content``: watch lines when iterated, the body in chunks by ``iter_chunked``."""

    def __init__(self, lines: list[bytes], hold: asyncio.Event | None, body: bytes) -> None:
        self._lines = lines
        self._hold = hold
        self._body = body

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        for i in range(0, len(self._body), n):
            yield self._body[i : i + n]

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._gen()

    async def _gen(self) -> AsyncIterator[bytes]:
        for line in self._lines:
            yield line
        if self._hold is not None:
            await self._hold.wait()


class FakeResponse:
    """What ``call_api(..., _preload_content=False)`` returns."""

    def __init__(self, answer: Answer) -> None:
        self.status = answer.status
        self.headers = CIMultiDict(answer.headers)
        body = answer.body
        self._body = body if isinstance(body, bytes) else json.dumps(body or {}).encode()
        lines = [
            (x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n"
            for x in (answer.lines or [])
        ]
        self.content = _Content(lines, answer.hold, self._body)
        self.content_length: int | None = None if answer.lines else len(self._body)
        self.closed = False

    async def __aenter__(self) -> FakeResponse:
        return self

    def close(self) -> None:
        """Drop the connection (a reader that stops early)."""
        self.closed = True

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def read(self) -> bytes:
        return self._body


@dataclass
class Call:
    """One request as the fake saw it."""

    host: str
    path: str
    query: dict[str, str]

    @property
    def verb(self) -> str:
        """``watch``, ``list`` (a collection) or ``get``."""
        if self.query.get("watch") == "true":
            return "watch"
        collection = ("limit", "labelSelector", "resourceVersionMatch")
        return "list" if any(k in self.query for k in collection) else "get"


Route = Callable[[Call], Answer | BaseException]


class FakeApi:
    """Answers ``call_api`` through ``route``; records every call."""

    def __init__(self, route: Route, host: str = "https://lb.example:6443") -> None:
        self.route = route
        self.host = host
        self.user_agent = ""
        self.calls: list[Call] = []
        self.closed = False

    async def call_api(self, path: str, method: str, **kw: Any) -> FakeResponse:
        assert method == "GET"
        host = kw.get("_host") or self.host
        call = Call(host, path, {k: str(v) for k, v in kw.get("query_params") or []})
        self.calls.append(call)
        answer = self.route(call)
        if isinstance(answer, BaseException):
            raise answer
        return FakeResponse(answer)

    async def close(self) -> None:
        self.closed = True


class FakeConnection(Connection):
    """A Connection whose clients are FakeApis sharing one route and call log."""

    def __init__(self, route: Route) -> None:
        cfg = Configuration()
        cfg.host = "https://lb.example:6443"
        cfg.api_key = {"BearerToken": "Bearer t0ken"}
        api = FakeApi(route)
        super().__init__("fake", cfg.host, cfg, api)  # type: ignore[arg-type]
        self.apis: dict[str, FakeApi] = {}

    @property
    def calls(self) -> list[Call]:
        """Every call through every client, in order per client."""
        out = list(self.api.calls)  # type: ignore[attr-defined]
        for api in self.apis.values():
            out.extend(api.calls)
        return out

    def instance_client(self, base_url: str) -> Any:
        api = FakeApi(self.api.route, base_url)  # type: ignore[attr-defined]
        self.apis[base_url] = api
        return api


async def connect_by_kubeconfig(server_url: str, tmp_path: Path, token: str) -> Connection:
    """A real :func:`ktop.sources.live.client.connect` through a kubeconfig that names
    ``server_url`` (a local test server) with a bearer ``token``: the user's own path."""
    cfg = tmp_path / "config"
    cfg.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "k", "cluster": {"server": server_url}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    return await connect(str(cfg), None, secrets=Secrets())


@asynccontextmanager
async def connected(server_url: str, tmp_path: Path, token: str) -> AsyncIterator[Connection]:
    """:func:`connect_by_kubeconfig`, closed when the block ends."""
    conn = await connect_by_kubeconfig(server_url, tmp_path, token)
    try:
        yield conn
    finally:
        await conn.close()
