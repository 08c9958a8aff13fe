"""``bundle capture`` writes no credential: an apiserver (or a proxy before it) that
echoes the request's Authorization header into ``/metrics``, the APF dumps and the API
lists puts the token in every body, and every file of the bundle is scrubbed of it."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from ktop.cli import main
from tests.unit.loopback import LoopbackServer

TOKEN = "abcd1234efgh5678BUNDLE7f3a9c"


async def echo(request: web.Request) -> web.StreamResponse:
    said = request.headers.get("Authorization", "")
    bare = said.removeprefix("Bearer ")  # echoed in no recognisable shape too
    if request.path == "/version":
        return web.json_response({"gitVersion": "v1.30.0"})
    if request.path == "/metrics":
        text = f'# HELP echo what the proxy saw\necho{{header="{said}",raw="{bare}"}} 1\n'
        return web.Response(text=text)
    if request.path.startswith("/debug/api_priority_and_fairness/"):
        return web.Response(text=f"PriorityLevelName, ActiveQueues\n{said}, 0\n{bare}, 1\n")
    if request.path.startswith("/api"):
        item = {"metadata": {"name": "n1", "annotations": {"seen": said, "raw": bare}}}
        return web.json_response({"kind": "List", "items": [item], "metadata": {}})
    return web.Response(status=404)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    s = LoopbackServer(echo)
    yield s
    s.stop()


def test_captured_bodies_hold_no_token(
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))
    cfg = tmp_path / "config"
    cfg.write_text(
        json.dumps(
            {
                "current-context": "c",
                "clusters": [{"name": "k", "cluster": {"server": server.url}}],
                "users": [{"name": "u", "user": {"token": TOKEN}}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    bundle = tmp_path / "bundle"
    code = main(["--kubeconfig", str(cfg), "bundle", "capture", str(bundle), "--scrapes", "1"])
    said = "".join(capfd.readouterr())
    assert code == 0, said
    files = [f for f in bundle.rglob("*") if f.is_file()]
    kinds = {f.relative_to(bundle).parts[0] for f in files}
    assert {"metrics", "apf", "api"} <= kinds, kinds  # the echoing bodies were written
    assert any(p == "/metrics" and a == f"Bearer {TOKEN}" for p, a in server.seen)
    b64 = base64.b64encode(TOKEN.encode()).decode()
    for f in files:
        raw = f.read_bytes()
        assert TOKEN.encode() not in raw and b64.encode() not in raw, f
        assert b"<redacted>" in raw, f  # the echo is there, masked
    assert TOKEN not in said
