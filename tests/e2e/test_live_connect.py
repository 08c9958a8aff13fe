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
from ktop.scrub import Secrets
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
    conn = await connect(str(cfg), None, secrets=Secrets())
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


def _client_cert(lab: Lab, out: Path) -> tuple[Path, Path]:
    """A client certificate for a member of system:masters, signed by the lab's CA."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    pki = lab.layout.pki
    ca_cert = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
            x509.NameAttribute(NameOID.COMMON_NAME, "ktop-cert-user"),
        ]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(hours=2))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    cert_path, key_path = out / "client.crt", out / "client.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_client_certificate_authenticates_every_instance(lab: Lab, tmp_path: Path) -> None:
    cert, key = _client_cert(lab, tmp_path)
    user = {"client-certificate": str(cert), "client-key": str(key)}
    cfg = _kubeconfig(
        tmp_path / "config", lab.info["apiservers"][0]["url"], lab.layout.pki / "ca.crt", user
    )
    conn = await connect(str(cfg), None, secrets=Secrets())
    try:
        assert (await probe(conn)).startswith("v1.")
        from ktop.sources.live.cost import CostMeter
        from ktop.sources.live.transport import TEXT, KubeTransport

        for a in lab.info["apiservers"]:
            api = conn.instance_client(a["url"])
            try:
                t = KubeTransport(api, CostMeter(), host=a["url"])
                body = (await t.get("/metrics", accept=TEXT)).body
                assert b"apiserver_request_total" in body
            finally:
                await api.close()
    finally:
        await conn.close()


SECRET = "abcd1234efgh5678SEKRIT7f3a9c"


@pytest.mark.parametrize("how", ["exec plugin token", "basic auth password", "bearer token"])
def test_rejected_credentials_never_printed_or_stored(
    lab: Lab,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    # The secret is caught because ktop read it in this run: every run of main() is a
    # session with its own Secrets, which starts knowing none.
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, sys\n"
        f"sys.stderr.write('issued {SECRET}\\n')\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
        f"'kind': 'ExecCredential', 'status': {{'token': {SECRET!r}}}}}))\n"
    )
    users: dict[str, dict[str, object]] = {
        "exec plugin token": {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": sys.executable,
                "args": [str(plugin)],
                "interactiveMode": "Never",
            }
        },
        "basic auth password": {"username": "admin", "password": SECRET},
        "bearer token": {"token": SECRET},
    }
    cfg = _kubeconfig(
        tmp_path / "config",
        lab.info["apiservers"][0]["url"],
        lab.layout.pki / "ca.crt",
        users[how],
    )
    assert main(["--kubeconfig", str(cfg)]) == 2
    out, err = capfd.readouterr()
    if how == "basic auth password":
        # The apiserver has no basic authenticator: the request is anonymous, /version is
        # public, and ktop goes on until it finds no terminal.
        assert "not a terminal" in err
    else:
        assert "rejected the credentials of context 'c'" in err
    assert SECRET not in out + err
    for f in (tmp_path / "cache").rglob("*"):
        assert SECRET not in f.read_text(errors="replace"), f
