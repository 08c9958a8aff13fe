"""``ktop record`` names the context it records, also when it is the kubeconfig's current one.

The name comes from the composition root: a live source opened for ``record`` says which
context it resolved (``OpenedSource.info``, the recording header's ``source``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ktop.cli import parse_args
from ktop.compose import Live, live_options, open_source
from ktop.scrub import Secrets
from ktop.sources.live import client

KUBECONFIG = (
    "apiVersion: v1\nkind: Config\ncurrent-context: prod-cell-b\n"
    "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1', "
    "insecure-skip-tls-verify: true}}]\n"
    "users: [{name: u, user: {token: t0ken}}]\n"
    "contexts: [{name: prod-cell-b, context: {cluster: k, user: u}},"
    " {name: other, context: {cluster: k, user: u}}]\n"
)


async def _no_probe(conn: client.Connection, timeout_s: float = 0.0) -> str:
    return "v1.33.0"


@pytest.mark.parametrize(
    ("flags", "expected"), [([], "prod-cell-b"), (["--context", "other"], "other")]
)
def test_the_header_names_the_resolved_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], expected: str
) -> None:
    cfg = tmp_path / "config"
    cfg.write_text(KUBECONFIG)
    monkeypatch.setattr(client, "probe", _no_probe)
    args = parse_args(["record", "-o", str(tmp_path / "r.ktrec"), "--kubeconfig", str(cfg), *flags])

    async def go() -> dict[str, str]:
        async with await open_source(Live(live_options(args)), Secrets()) as opened:
            assert opened.connection is not None
            return opened.info

    desc = asyncio.run(go())
    assert desc["kind"] == "live" and desc["context"] == expected
