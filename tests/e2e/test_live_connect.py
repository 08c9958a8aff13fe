"""Connecting to a real apiserver: exec plugins, and plain errors for TLS and credentials."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from ktop.cli import main
from ktop.lab import Lab
from ktop.lab.pki import write_pki
from ktop.sources.live.client import connect, probe


def _kubeconfig(path: Path, server: str, ca: Path, user: Mapping[str, object]) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [
                    {"name": "k", "cluster": {"server": server, "certificate-authority": str(ca)}}
                ],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    return path


async def test_exec_credential_plugin_is_run_and_its_token_used(lab: Lab, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
        "'kind': 'ExecCredential', "
        f"'status': {{'token': {lab.info['admin_token']!r}, "
        "'expirationTimestamp': '2099-01-01T00:00:00Z'}}))\n"
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    cfg = _kubeconfig(
        tmp_path / "config", lab.info["apiservers"][0]["url"], lab.layout.pki / "ca.crt", user
    )
    conn = await connect(str(cfg), None)
    try:
        assert (await probe(conn)).startswith("v1.")
    finally:
        await conn.close()


def test_expired_credentials_are_named(
    lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "not-a-valid-token-0123456789"
    cfg = _kubeconfig(
        tmp_path / "config",
        lab.info["apiservers"][0]["url"],
        lab.layout.pki / "ca.crt",
        {"token": secret},
    )
    assert main(["--kubeconfig", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "rejected the credentials of context 'c' (expired or revoked)" in err
    assert secret not in err


def test_tls_failure_is_named(lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other-pki"
    write_pki(other)  # a CA that did not sign the lab's serving certificate
    cfg = _kubeconfig(
        tmp_path / "config",
        lab.info["apiservers"][0]["url"],
        other / "ca.crt",
        {"token": lab.info["admin_token"]},
    )
    assert main(["--kubeconfig", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "TLS verification of https://127.0.0.1:" in err and "failed" in err
    assert lab.info["admin_token"] not in err
