"""A managed-Prometheus-like endpoint: the lab's real Prometheus behind a proxy that, as
Mimir, Cortex, Google's and Azure's managed stores do, demands a tenant header and a
bearer token that expires within seconds, obtained from a token command.

``ktop record`` reads the live cluster with its metrics from that endpoint for several
token lifetimes: every poll is answered (the command is run again before each token
expires), the tenant header goes with every request, and ``--prometheus-offset`` reads
Prometheus' "now" that far back. Without the tenant header the endpoint's refusal is
said, with its words.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from ktop.cli import main
from ktop.lab import Lab
from ktop.model.events import Component, MetricsScraped, ScrapeFailed
from ktop.record.reader import Recording
from tests.e2e.cadence import KTOP_SCRAPE_S, PROCESS_START_S, deadline, prometheus_first_s
from tests.e2e.helpers import poll
from tests.unit.loopback import LoopbackServer

TOKEN_LIFE_S = 6.0
"""How long the endpoint accepts a token (Google's last an hour; short here so that a
recording of a few seconds outlives several)."""
OFFSET_S = 5.0
TENANT = "cell-a"

TOKEN_SCRIPT = """\
import datetime, hashlib, hmac, json, pathlib, sys, time
key = pathlib.Path(sys.argv[1]).read_bytes()
issued = f"{time.time():.3f}"
sig = hmac.new(key, issued.encode(), hashlib.sha256).hexdigest()
expires = datetime.datetime.fromtimestamp(time.time() + float(sys.argv[2]), datetime.UTC)
print(json.dumps({
    "apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
    "status": {"token": f"{issued}.{sig}",
               "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")},
}))
"""


@dataclass
class Gateway:
    """The proxy's key, and what it saw: tokens accepted and refused, and for each
    ``time()`` query, when it came and the instant it asked for."""

    key: bytes
    upstream: str
    accepted: set[str] = field(default_factory=set)
    refused: list[str] = field(default_factory=list)
    now_queries: list[tuple[float, float]] = field(default_factory=list)
    answered: int = 0
    client: aiohttp.ClientSession | None = None

    def why_not(self, request: web.Request) -> str:
        """Why the request is refused (empty when it is let through)."""
        if request.headers.get("X-Scope-OrgID") != TENANT:
            return "no org id"  # Mimir's and Cortex's words
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        issued, _, sig = token.rpartition(".")
        good = hmac.new(self.key, issued.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(sig, good):
            return "invalid token"
        if time.time() - float(issued) > TOKEN_LIFE_S:
            return "token expired"
        self.accepted.add(token)
        return ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        why = self.why_not(request)
        if why:
            self.refused.append(why)
            return web.Response(status=401, text=why)
        if request.path.endswith("/api/v1/query") and request.query.get("query") == "time()":
            self.now_queries.append((time.time(), float(request.query.get("time", "nan"))))
        if self.client is None:  # made in the server's loop, kept for every request
            self.client = aiohttp.ClientSession()
        async with self.client.get(self.upstream + request.path_qs) as answer:
            body = await answer.read()
        self.answered += 1
        return web.Response(status=answer.status, body=body, content_type="application/json")


@pytest.fixture
def gateway(lab: Lab) -> Iterator[tuple[Gateway, str]]:
    prom = lab.info["prometheus_url"]
    assert prom, "the lab runs without Prometheus"
    gw = Gateway(secrets.token_bytes(32), str(prom))
    server = LoopbackServer(gw.handle)
    try:
        yield gw, server.url
    finally:
        if gw.client is not None:
            asyncio.run_coroutine_threadsafe(gw.client.close(), server.loop).result(10)
        server.stop()


def _command(tmp_path: Path, key: bytes) -> str:
    script, key_file = tmp_path / "token.py", tmp_path / "key"
    script.write_text(TOKEN_SCRIPT)
    key_file.write_bytes(key)
    return f"{sys.executable} {script} {key_file} {TOKEN_LIFE_S:g}"


def _two_token_lives_of_polls(gw: Gateway) -> bool:
    """Polls through the endpoint for more than two token lifetimes (three tokens at least)."""
    q = list(gw.now_queries)
    return len(q) >= 2 and q[-1][0] - q[0][0] > 2 * TOKEN_LIFE_S


def test_a_tenant_header_and_short_lived_tokens_from_a_command(
    lab: Lab, gateway: tuple[Gateway, str], tmp_path: Path
) -> None:
    """Slow: ``ktop record`` runs until its Prometheus polls have gone on for two token
    lifetimes, after its backfill of the last hour (up to its own limit on a busy machine),
    then is stopped as a user stops it (SIGINT)."""
    gw, url = gateway
    out = tmp_path / "managed.ktrec"
    limit_s = deadline(prometheus_first_s(KTOP_SCRAPE_S), 2 * TOKEN_LIFE_S)
    argv = [
        "record", "-o", str(out), "--kubeconfig", str(lab.layout.kubeconfig),
        "--duration", f"{limit_s:.0f}", "--scrape-interval", f"{KTOP_SCRAPE_S:g}",
        "--prometheus", url,
        "--prometheus-token-command", _command(tmp_path, gw.key),
        "--prometheus-header", f"X-Scope-OrgID: {TENANT}",
        "--prometheus-offset", f"{OFFSET_S:g}",
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "ktop", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        poll(
            lambda: _two_token_lives_of_polls(gw),
            timeout_s=limit_s,
            what="Prometheus polls through the endpoint for two token lifetimes",
        )
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=deadline(PROCESS_START_S))
    assert proc.returncode == 0, err
    assert not gw.refused, gw.refused
    # the command ran again before each token expired: a token per lifetime, none refused
    assert len(gw.accepted) >= 3, len(gw.accepted)
    # every poll's "now" was asked for OFFSET_S back (to the millisecond it was sent)
    assert gw.now_queries
    for came, asked in gw.now_queries:
        assert OFFSET_S <= came - asked <= OFFSET_S + 1.0, (came, asked)
    with Recording(str(out)) as rec:
        rec_start = rec.start
        events = rec.cursor(rec.start - 1.0).advance(rec.end)
    failed = [e for e in events if isinstance(e, ScrapeFailed) and "Prometheus" in e.reason]
    assert not failed, failed[:3]
    polls = {
        e.at
        for e in events
        if isinstance(e, MetricsScraped) and e.target.component is Component.APISERVER
    }
    # polled on after the first token expired (each poll is its own instant: ``at``)
    assert polls and max(polls) - rec_start > TOKEN_LIFE_S, (sorted(polls), rec_start, gw.answered)
    secret_tokens = [t for t in gw.accepted if t in repr(events)]
    assert not secret_tokens, "a token is in the recording"


def test_without_the_tenant_header_the_refusal_is_said(
    gateway: tuple[Gateway, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gw, url = gateway
    now = time.time()
    argv = [
        "record", "-o", str(tmp_path / "refused.ktrec"), "--from-prometheus", url,
        "--start", f"{now - 120:.0f}", "--end", f"{now:.0f}",
        "--prometheus-token-command", _command(tmp_path, gw.key),
    ]  # fmt: skip
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0 and "401" in err and "no org id" in err, err
    assert gw.refused and set(gw.refused) == {"no org id"}
