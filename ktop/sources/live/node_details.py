"""Whole Nodes for not-Ready nodes: rate-limited, deduplicated, capped (the node watch
sees Tables without objects; the conditions of a node that is not Ready are read whole).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from urllib.parse import quote

from ktop.model.events import FEED_NODE_DETAILS, FeedFailed, FeedSynced
from ktop.scrub import Secrets
from ktop.sources.base import Emit
from ktop.sources.convert import node_record
from ktop.sources.live.errors import ApiError
from ktop.sources.live.handlers import NodesHandler
from ktop.sources.live.reads import NODE_DETAIL
from ktop.sources.live.scrape import failure_reason
from ktop.sources.live.transport import KubeTransport


class NodeDetails:
    """Fetches whole Nodes for not-Ready nodes: rate-limited, deduplicated, capped."""

    def __init__(self, per_s: float, cap: int, secrets: Secrets | None = None) -> None:
        self.per_s = per_s
        self.cap = cap
        self.secrets = secrets if secrets is not None else Secrets()
        """The session's credentials, which a failure's reason is scrubbed with."""
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.pending: set[str] = set()
        self.fetched = 0
        self.failing = False

    def want(self, name: str) -> None:
        """Ask for a node's detail (ignored when already queued or over the cap).

        A node without a name is never fetched: ``/api/v1/nodes/`` would be an
        unpaginated LIST of every node.
        """
        if not name or name in self.pending or len(self.pending) >= self.cap:
            return
        self.pending.add(name)
        self.queue.put_nowait(name)

    async def run(
        self, t: KubeTransport, handler: NodesHandler, emit: Emit, clock: Callable[[], float]
    ) -> None:
        """Fetch queued nodes until cancelled; failures are reported, not swallowed."""
        while True:
            name = await self.queue.get()
            self.pending.discard(name)
            try:
                obj = (await t.get(NODE_DETAIL.format(name=quote(name, safe="")))).json()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                if isinstance(e, ApiError) and e.status == 404:
                    pass  # deleted meanwhile: its watch says so
                else:
                    self.failing = True
                    what = str(e) if isinstance(e, ApiError) else failure_reason(e, self.secrets)
                    emit([FeedFailed(clock(), FEED_NODE_DETAILS, f"node {name}: {what}")])
                    await asyncio.sleep(5.0)
            else:
                emit(handler.detail(clock(), node_record(obj, handler.rack_label)))
                self.fetched += 1
                if self.failing or self.fetched == 1:
                    self.failing = False
                    emit([FeedSynced(clock(), FEED_NODE_DETAILS)])
            await asyncio.sleep(1.0 / self.per_s)
