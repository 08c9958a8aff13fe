"""A small HTTP server on loopback, in its own thread, for tests that drive ktop against
a server that behaves in a chosen way (it never listens beyond 127.0.0.1)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class LoopbackServer:
    """Serves every path with ``handler`` at :attr:`url` (``http://127.0.0.1:PORT``);
    :attr:`seen` keeps each request's path and Authorization header."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.seen: list[tuple[str, str]] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.url = ""
        self.runner: web.AppRunner | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        assert self.ready.wait(10), "the loopback server did not start"

    def _serve(self) -> None:
        async def answer(request: web.Request) -> web.StreamResponse:
            self.seen.append((request.path, request.headers.get("Authorization", "")))
            return await self.handler(request)

        async def start() -> None:
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", answer)
            self.runner = web.AppRunner(app)
            await self.runner.setup()
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
            server: Any = site._server
            self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            self.ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


async def version_only(request: web.Request) -> web.StreamResponse:
    """An apiserver that answers ``/version`` and refuses everything else (403)."""
    if request.path == "/version":
        return web.json_response({"gitVersion": "v1.30.0"})
    return web.json_response({"kind": "Status", "code": 403, "message": "forbidden"}, status=403)
