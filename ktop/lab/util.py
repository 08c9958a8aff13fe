"""Small stdlib helpers: free loopback ports, polling with a deadline, HTTP probes."""

from __future__ import annotations

import argparse
import json
import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from aiohttp import web

T = TypeVar("T")

LOOPBACK = "127.0.0.1"


class LabError(RuntimeError):
    """Raised when the lab cannot start, stop or inject something."""


def free_port() -> int:
    """Return a TCP port that is currently free on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def free_ports(count: int) -> list[int]:
    """Return `count` distinct free loopback ports (sockets held open until all are chosen)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            socks.append(sock)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for sock in socks:
            sock.close()


def wait_for(
    probe: Callable[[], T | None],
    *,
    timeout_s: float,
    what: str,
    interval_s: float = 0.25,
    on_timeout: Callable[[], str] | None = None,
) -> T:
    """Poll `probe` until it returns a truthy value or `timeout_s` elapses.

    Exceptions raised by the probe count as "not yet". On timeout a LabError names `what`
    and, when given, the text returned by `on_timeout` (e.g. a log tail).
    """
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while True:
        try:
            result = probe()
            if result:
                return result
        except Exception as exc:
            last_error = exc
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error!r})" if last_error else ""
            extra = f"\n{on_timeout()}" if on_timeout else ""
            raise LabError(f"timed out after {timeout_s:.0f}s waiting for {what}{detail}{extra}")
        time.sleep(interval_s)


def insecure_ssl_context() -> ssl.SSLContext:
    """An SSL context that does not verify certificates (loopback components only)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def http_get(url: str, token: str | None = None, timeout_s: float = 5.0) -> tuple[int, bytes]:
    """GET `url` (TLS unverified, optional bearer token); return (status, body)."""
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s, context=insecure_ssl_context()) as resp:
            return int(resp.status), bytes(resp.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), bytes(exc.read())


def http_ok(url: str, token: str | None = None) -> bool:
    """True when GET `url` answers 200."""
    status, _ = http_get(url, token)
    return status == 200


def http_json(url: str, token: str | None = None, timeout_s: float = 5.0) -> Any:
    """GET `url` and decode JSON; raise LabError on a non-200 answer."""
    status, body = http_get(url, token, timeout_s)
    if status != 200:
        raise LabError(f"GET {url} -> {status}: {body[:300]!r}")
    return json.loads(body)


def tail(path: str, lines: int = 30) -> str:
    """Last `lines` lines of a text file, or a note when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "".join(fh.readlines()[-lines:])
    except OSError as exc:
        return f"(cannot read {path}: {exc})"


def server_parser(prog: str) -> argparse.ArgumentParser:
    """Options of the lab's small HTTPS servers (EKS's metrics API, OpenShift's query proxy)."""
    p = argparse.ArgumentParser(prog=prog)
    for name, what in (("--listen", "HOST:PORT"), ("--cert", "FILE"), ("--key", "FILE")):
        p.add_argument(name, required=True, help=what)
    return p


def serve(server: web.Application, args: argparse.Namespace) -> None:
    """Serve ``server`` over TLS at ``--listen`` with ``--cert`` and ``--key``, until killed."""
    host, _, port = args.listen.rpartition(":")
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(args.cert, args.key)
    web.run_app(server, host=host, port=int(port), ssl_context=tls, print=None)
