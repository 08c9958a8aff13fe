"""Capture a bundle from a live cluster with the live source's clients.

It writes exactly what a user would assemble by hand (``docs/bundle-format.md``):
each API list as ``kubectl get <resource> -A -o json`` prints it (pages joined,
each item's ``apiVersion`` and ``kind`` set), every reachable metrics target
scraped ``scrapes`` times ``interval_s`` apart, and each apiserver instance's APF
dump. A read that fails is left out (its evidence will be unknown) and reported.

Every body is scrubbed of the session's secrets (the connection's
:class:`~ktop.scrub.Secrets`) before it is written: an apiserver or a proxy that echoes
the request's ``Authorization`` header into ``/metrics`` or an APF dump must not put the
token into the bundle.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from ktop.model.apf_requests import REQUESTS_QUERY
from ktop.model.events import LOAD_BALANCED, Component
from ktop.scrub import Secrets
from ktop.sources.bundle.layout import (
    APF_DIR,
    APF_REQUESTS_DIR,
    APF_SUFFIX,
    API_DIR,
    API_RESOURCES,
    METRICS_DIR,
    METRICS_SUFFIX,
)
from ktop.sources.live.client import Connection
from ktop.sources.live.components import http_fetcher
from ktop.sources.live.discovery import apiserver_endpoints
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.reads import (
    APF_DUMP,
    APF_REQUESTS,
    APF_REQUESTS_MAX_BYTES,
    CLUSTER_LISTS,
)
from ktop.sources.live.transport import TEXT, KubeTransport, instance_name

API_PATHS: dict[str, tuple[str, str]] = {r: CLUSTER_LISTS[r] for r in API_RESOURCES}
"""Bundle API file -> (apiVersion, list path)."""
PAGE = 500

Fetch = Callable[[], Awaitable[bytes | None]]


@dataclass(slots=True)
class Captured:
    """What a capture wrote and what it could not read."""

    files: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


async def _list(t: KubeTransport, api_version: str, path: str) -> dict[str, Any]:
    items: list[Any] = []
    cont = ""
    kind = "List"
    while True:
        query = [("limit", str(PAGE))] + ([("continue", cont)] if cont else [])
        page = (await t.get(path, query)).json()
        kind = str(page.get("kind", "List"))
        for item in page.get("items") or []:
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind.removesuffix("List"))
            items.append(item)
        cont = (page.get("metadata") or {}).get("continue") or ""
        if not cont:
            break
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def scrubbed_body(body: bytes, secrets: Secrets) -> bytes:
    """``body`` with every secret ``secrets`` knows or recognises masked; bytes that are
    not UTF-8 are kept as they were.
    """
    text = body.decode("utf-8", "surrogateescape")
    return secrets.scrub(text).encode("utf-8", "surrogateescape")


def _write(root: Path, rel: str, body: bytes, out: Captured, secrets: Secrets) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(scrubbed_body(body, secrets))
    out.files.append(rel)


async def capture(
    conn: Connection,
    opts: LiveOptions,
    directory: str | Path,
    *,
    scrapes: int = 2,
    interval_s: float = 10.0,
    clock: Callable[[], float] = time.time,
) -> Captured:
    """Write a bundle of the cluster ``conn`` reaches into ``directory``."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    out = Captured()
    meter = conn.meter
    t = KubeTransport(conn.api, meter)
    bases = list(opts.apiservers)
    if not bases:
        try:
            bases = await apiserver_endpoints(t)
        except Exception as exc:
            out.failures.append(f"apiserver endpoints: {exc}")
    instances: list[tuple[str, KubeTransport]] = []
    clients = []
    for base in bases:
        api = conn.instance_client(base)
        clients.append(api)
        instances.append((instance_name(base), KubeTransport(api, meter, host=base)))
    session = aiohttp.ClientSession(auto_decompress=False)
    try:
        if instances:
            reachable = []
            for name, it in instances:
                try:
                    await it.get("/version")
                    reachable.append((name, it))
                except Exception as exc:
                    out.failures.append(f"apiserver {name}: {exc}")
            instances = reachable
        if not instances:
            instances = [(LOAD_BALANCED, t)]

        def token() -> str:
            cfg = conn.cfg
            return str(cfg.api_key.get("BearerToken", "") or cfg.api_key.get("authorization", ""))

        targets: list[tuple[str, str, Fetch]] = []
        for comp, urls, tls, tok in (
            (Component.ETCD, opts.etcd_metrics, opts.etcd_tls, None),
            (Component.SCHEDULER, opts.scheduler_metrics, opts.component_tls, token),
            (
                Component.CONTROLLER_MANAGER,
                opts.controller_manager_metrics,
                opts.component_tls,
                token,
            ),
        ):
            for url in urls:
                fetch = http_fetcher(
                    session,
                    url,
                    token=tok,
                    tls=tls,
                    meter=meter,
                    destination=f"{comp} {instance_name(url)}",
                )
                targets.append((comp.value, instance_name(url), fetch))
        for name, it in instances:

            async def metrics(it: KubeTransport = it) -> bytes | None:
                return (await it.get("/metrics", accept=TEXT)).body

            targets.append((Component.APISERVER.value, name, metrics))

        for round_ in range(scrapes):
            if round_:
                await asyncio.sleep(interval_s)
            at = int(clock())
            for kind, name, fetch in targets:
                try:
                    body = await fetch()
                except Exception as exc:
                    out.failures.append(f"{kind} {name}: {exc}")
                    continue
                if body is not None:
                    _write(
                        root,
                        f"{METRICS_DIR}/{kind}/{name}/{at}{METRICS_SUFFIX}",
                        body,
                        out,
                        conn.secrets,
                    )
            for name, it in instances:
                try:
                    dump = (await it.get(APF_DUMP, accept=TEXT)).body
                except Exception as exc:
                    out.failures.append(f"APF dump {name}: {exc}")
                    continue
                _write(root, f"{APF_DIR}/{name}/{at}{APF_SUFFIX}", dump, out, conn.secrets)
                try:
                    got, _ = await it.get_head(
                        APF_REQUESTS, REQUESTS_QUERY, APF_REQUESTS_MAX_BYTES, accept=TEXT
                    )
                except Exception as exc:
                    out.failures.append(f"APF request dump {name}: {exc}")
                    continue
                _write(
                    root, f"{APF_REQUESTS_DIR}/{name}/{at}{APF_SUFFIX}", got.body, out, conn.secrets
                )
            if round_ == 0:
                for resource, (api_version, path) in API_PATHS.items():
                    try:
                        doc = await _list(t, api_version, path)
                    except Exception as exc:
                        out.failures.append(f"{API_DIR}/{resource}.json: {exc}")
                        continue
                    body = json.dumps(doc, indent=4).encode()
                    _write(root, f"{API_DIR}/{resource}.json", body, out, conn.secrets)
    finally:
        await session.close()
        for api in clients:
            await api.close()
    return out
