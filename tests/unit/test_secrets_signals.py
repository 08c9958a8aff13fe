"""An inline client key (``client-key-data``) never stays readable in ``$TMPDIR``, however
ktop ends: SIGTERM, SIGHUP or kill -9 while it waits for the server."""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ktop.sources.live.client import PROBE_TIMEOUT_S
from ktop.sources.live.memory_files import supported

pytestmark = pytest.mark.skipif(not supported(), reason="memory files need Linux's memfd")


def _key_and_cert() -> tuple[bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ktop-test-user")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    pem_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    return pem_key, cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="module")
def pki() -> tuple[bytes, bytes]:
    return _key_and_cert()


@pytest.fixture
def silent() -> Iterator[socket.socket]:
    """A loopback listener that accepts connections and never answers (the TLS handshake
    waits: ktop holds its key loaded while it does)."""
    with socket.create_server(("127.0.0.1", 0)) as s:
        yield s


COMMANDS = {
    "dashboard": [],
    "snapshot": ["snapshot"],
    "fleet": ["fleet"],
    "record": ["record", "-o", "{tmp}/rec.ktop"],
}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_key_file_outlives_a_signal(
    command: str,
    sig: signal.Signals,
    pki: tuple[bytes, bytes],
    silent: socket.socket,
    tmp_path: Path,
) -> None:
    key, cert = pki
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    port = silent.getsockname()[1]
    cfg = tmp_path / "config"
    user = {
        "client-certificate-data": base64.b64encode(cert).decode(),
        "client-key-data": base64.b64encode(key).decode(),
    }
    cfg.write_text(
        json.dumps(
            {
                "current-context": "c",
                "clusters": [
                    {
                        "name": "k",
                        "cluster": {
                            "server": f"https://127.0.0.1:{port}",
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    env = {**os.environ, "TMPDIR": str(tmpdir), "KTOP_CACHE_DIR": str(tmp_path / "cache")}
    argv = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ktop", "--kubeconfig", str(cfg), *argv],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # ktop connects once its credentials are loaded; it then waits for the handshake
        # up to its probe time limit.
        ready, _, _ = select.select([silent], [], [], 30 + PROBE_TIMEOUT_S)
        assert ready, "ktop never connected"
        conn, _ = silent.accept()
        proc.send_signal(sig)
        proc.wait(30)
        conn.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
    left = [f for f in tmpdir.rglob("*") if f.is_file()]
    assert not [f for f in left if key in f.read_bytes()], left
    assert not left, left
