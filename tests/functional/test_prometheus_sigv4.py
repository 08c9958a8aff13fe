"""Amazon Managed Service for Prometheus: ktop's requests are signed with AWS SigV4.

A local HTTP server stands in for the workspace (Amazon's endpoint cannot be reached from
here) and records what arrives; the signature is checked by an implementation of the
published algorithm written here (canonical request, string to sign, HMAC key chain), not
by botocore, which signs; the credentials are the AWS documentation's example keys.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import pytest

from ktop.scrub import Secrets
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.prometheus_connect import (
    PrometheusAuth,
    PrometheusConfigError,
    prometheus_client,
)
from ktop.sources.live.prometheus_sigv4 import workspace_region

KEY_ID = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "session-token-example"
REGION = "us-west-2"
NOW = 1_796_688_000.0


class Workspace(BaseHTTPRequestHandler):
    """Answers every query with Prometheus' shape, and keeps what it was sent."""

    seen: list[dict[str, Any]] = []

    def do_GET(self) -> None:
        self.seen.append(
            {"method": "GET", "target": self.path, "headers": dict(self.headers.items())}
        )
        body = json.dumps(
            {"status": "success", "data": {"resultType": "scalar", "result": [NOW, str(NOW)]}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        """Quiet."""


@pytest.fixture
def workspace() -> Iterator[str]:
    Workspace.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Workspace)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/workspaces/ws-example"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The example keys in the environment, and no other AWS configuration."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def expected_signature(request: dict[str, Any], signed: list[str], amz_date: str) -> str:
    """SigV4 as AWS publishes it, for a GET with no body."""
    target = urlsplit(request["target"])
    headers = {k.lower(): " ".join(v.split()) for k, v in request["headers"].items()}
    query = sorted(parse_qsl(target.query, keep_blank_values=True))
    canonical = "\n".join(
        [
            "GET",
            quote(target.path, safe="/~"),
            "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in query),
            "".join(f"{h}:{headers[h]}\n" for h in signed),
            ";".join(signed),
            hashlib.sha256(b"").hexdigest(),
        ]
    )
    scope = f"{amz_date[:8]}/{REGION}/aps/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(f"AWS4{SECRET}".encode(), amz_date[:8])
    for part in (REGION, "aps", "aws4_request"):
        key = _hmac(key, part)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_every_query_is_signed_for_the_workspace(workspace: str, aws_env: None) -> None:
    secrets = Secrets()
    auth = PrometheusAuth(sigv4=True, sigv4_region=REGION)
    client = prometheus_client(workspace, CostMeter(), auth=auth, secrets=secrets)
    assert float(client.custom_query("time()")[0]) == NOW
    (request,) = Workspace.seen
    assert request["target"].startswith("/workspaces/ws-example/api/v1/query?")
    headers = {k.lower(): v for k, v in request["headers"].items()}
    authorization = headers["authorization"]
    scheme, _, rest = authorization.partition(" ")
    parts = dict(p.strip().split("=", 1) for p in rest.split(","))
    amz_date = headers["x-amz-date"]
    assert scheme == "AWS4-HMAC-SHA256"
    assert parts["Credential"] == f"{KEY_ID}/{amz_date[:8]}/{REGION}/aps/aws4_request"
    signed = parts["SignedHeaders"].split(";")
    assert {"host", "x-amz-date", "x-amz-security-token"} <= set(signed)
    assert headers["x-amz-security-token"] == TOKEN
    assert parts["Signature"] == expected_signature(request, signed, amz_date)
    signed_at = time.mktime(time.strptime(amz_date, "%Y%m%dT%H%M%SZ")) - time.timezone
    assert abs(signed_at - time.time()) < 300
    # the secret parts never reach a message: the session's secrets scrub them
    assert SECRET not in secrets.scrub(f"failed with {SECRET} and {TOKEN}")
    assert TOKEN not in secrets.scrub(f"failed with {TOKEN}")


def test_the_region_comes_from_the_workspace_url() -> None:
    url = "https://aps-workspaces.eu-central-1.amazonaws.com/workspaces/ws-1"
    assert workspace_region(url) == "eu-central-1"
    assert workspace_region("https://prometheus.example:9090") is None


@pytest.mark.parametrize(
    ("auth", "words"),
    [
        (PrometheusAuth(sigv4=True), "no region"),
        (PrometheusAuth(sigv4=True, sigv4_region=REGION, username="u"), "one of"),
    ],
)
def test_what_cannot_sign_is_refused_with_the_reason(
    workspace: str, aws_env: None, auth: PrometheusAuth, words: str
) -> None:
    with pytest.raises(PrometheusConfigError, match=words):
        prometheus_client(workspace, CostMeter(), auth=auth, secrets=Secrets())
    assert not Workspace.seen


def test_no_credentials_is_refused_with_where_they_were_looked_for(
    workspace: str, aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    auth = PrometheusAuth(sigv4=True, sigv4_region=REGION)
    with pytest.raises(PrometheusConfigError, match="no AWS credentials found"):
        prometheus_client(workspace, CostMeter(), auth=auth, secrets=Secrets())


def test_a_service_proxy_address_is_not_signed() -> None:
    auth = PrometheusAuth(sigv4=True, sigv4_region=REGION)
    with pytest.raises(PrometheusConfigError, match="k8s://"):
        prometheus_client(
            "k8s://monitoring/prometheus:web", CostMeter(), auth=auth, secrets=Secrets()
        )
