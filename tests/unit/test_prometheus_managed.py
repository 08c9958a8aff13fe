"""Managed and global Prometheus: a token from a command (reused, refreshed before expiry and
after a refusal), a tenant header, a query offset for a lagging store.

The token commands are real processes (small Python scripts); Prometheus is answered in
place of the network (``FakeHttp``, as the other client tests do); the lab's Prometheus
behind a proxy that demands all three is tests/e2e/test_managed_prometheus.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from ktop.cli import parse_args
from ktop.model.events import MetricsScraped
from ktop.scrub import Secrets
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_connect import (
    PrometheusAuth,
    PrometheusConfigError,
    prometheus_client,
    split_header,
)
from ktop.sources.live.prometheus_flags import prometheus_auth
from ktop.sources.live.token_command import (
    PLAIN_TOKEN_REUSE_S,
    REFRESH_BEFORE_S,
    TokenCommand,
    TokenCommandError,
)
from tests.unit.test_live_prometheus import PROM_TIME, FakeHttp, Recorder, apiserver_answer, faked

COUNTER = (
    "import pathlib, sys\n"
    "p = pathlib.Path(sys.argv[1])\n"
    "n = int(p.read_text() or 0) + 1\n"
    "p.write_text(str(n))\n"
)
"""A script's first lines: count its runs in the file given as its first argument."""


def _script(tmp_path: Path, body: str) -> tuple[str, ...]:
    """A token command: ``python SCRIPT COUNTER_FILE``; ``n`` is its run number."""
    script = tmp_path / "token.py"
    script.write_text(COUNTER + body)
    runs = tmp_path / "runs"
    runs.write_text("0")
    return (sys.executable, str(script), str(runs))


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_plain_token_is_reused_then_asked_for_again(tmp_path: Path) -> None:
    argv = _script(tmp_path, "print(f'token-number-{n}')\n")
    clock, secrets = Clock(1000.0), Secrets()
    command = TokenCommand(argv, secrets, clock=clock)
    assert command.header() == "Bearer token-number-1"
    clock.now += PLAIN_TOKEN_REUSE_S - 1
    assert command.header() == "Bearer token-number-1" and command.runs == 1
    clock.now += 1
    assert command.header() == "Bearer token-number-2" and command.runs == 2
    # Prometheus refused it: the next request runs the command again, at once
    command.refused()
    assert command.header() == "Bearer token-number-3"
    # every token it printed is the session's secret
    said = "refused token-number-1 and token-number-3"
    assert "token-number" not in secrets.scrub(said)


def _credential(token: str, expires_in_s: float | None, version: str = "v1") -> str:
    status: dict[str, Any] = {"token": token}
    if expires_in_s is not None:
        at = datetime.fromtimestamp(1000.0 + expires_in_s, tz=UTC)
        status["expirationTimestamp"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return json.dumps(
        {
            "apiVersion": f"client.authentication.k8s.io/{version}",
            "kind": "ExecCredential",
            "status": status,
        }
    )


@pytest.mark.parametrize(
    ("expires_in_s", "good_for_s"),
    [
        (3600.0, 3600.0 - REFRESH_BEFORE_S),  # a cloud CLI's hour: refreshed a minute early
        (20.0, 10.0),  # a short-lived token: refreshed halfway
        (None, PLAIN_TOKEN_REUSE_S),  # no expiry given: as a plain token
    ],
)
def test_an_exec_credential_is_refreshed_before_it_expires(
    tmp_path: Path, expires_in_s: float | None, good_for_s: float
) -> None:
    printed = _credential("{n}", expires_in_s, "v1beta1")
    argv = _script(tmp_path, f"print({printed!r}.replace('{{n}}', f'cred-token-{{n}}'))\n")
    clock = Clock(1000.0)
    command = TokenCommand(argv, Secrets(), clock=clock)
    assert command.header() == "Bearer cred-token-1"
    clock.now = 1000.0 + good_for_s - 0.5
    assert command.header() == "Bearer cred-token-1"
    clock.now = 1000.0 + good_for_s
    assert command.header() == "Bearer cred-token-2"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "sys.stderr.write('denied for sekret-value-123\\n'); sys.exit(3)",
            "exited with status 3: denied for",
        ),
        ("print('two words')", "not one token"),
        ("print('')", "not one token"),
        ('print(\'{"kind": "Other"}\')', "did not print an ExecCredential"),
        (
            f"print({_credential('', 60)!r})",
            "neither a token nor a client certificate",
        ),
        ("import time; time.sleep(30)", "did not answer within 0.5s"),
    ],
    ids=["exit-status", "two-words", "empty", "not-a-credential", "no-token", "timeout"],
)
def test_a_failing_command_says_what_failed_and_never_prints_its_output(
    tmp_path: Path, body: str, said: str
) -> None:
    secrets = Secrets()
    secrets.add("sekret-value-123")
    command = TokenCommand(_script(tmp_path, body + "\n"), secrets, timeout_s=0.5)
    with pytest.raises(TokenCommandError) as err:
        command.header()
    text = str(err.value)
    assert said in text and "--prometheus-token-command" in text, text
    assert "sekret-value-123" not in text and "two words" not in text


def test_a_command_that_is_not_there_is_refused_before_any_request() -> None:
    with pytest.raises(PrometheusConfigError, match="no such command"):
        prometheus_client(
            "https://prom.example",
            CostMeter(),
            auth=PrometheusAuth(token_command=("no-such-ktop-token-tool",)),
            secrets=Secrets(),
        )
    with pytest.raises(PrometheusConfigError, match="one of a token file, a token command"):
        prometheus_client(
            "https://prom.example",
            CostMeter(),
            auth=PrometheusAuth(bearer_token_file="/t", token_command=(sys.executable,)),
            secrets=Secrets(),
        )


def _poll(client: Any, clock: float = 7.0) -> tuple[PrometheusMetrics, Recorder]:
    prom = PrometheusMetrics(client, "https://prom.example", lambda: clock)
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    return prom, emit


def test_tenant_headers_token_and_offset_go_with_every_request(tmp_path: Path) -> None:
    argv = _script(tmp_path, "print(f'token-number-{n}')\n")
    secrets = Secrets()
    auth = PrometheusAuth(
        token_command=argv,
        headers=("X-Scope-OrgID: cell-a", "X-Api-Key:key-value-456"),
        offset_s=30.0,
    )
    client = prometheus_client("https://prom.example", CostMeter(), auth=auth, secrets=secrets)
    client._session.clock = lambda: PROM_TIME + 30.0
    http = FakeHttp(apiserver_answer)
    faked(client, http)
    prom = PrometheusMetrics(client, "https://prom.example", lambda: 1000.0, offset_s=30.0)
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    assert prom.healthy and http.seen
    # its scrapes are stamped the offset back: a pane's age counts it
    scraped = [e for e in emit.events if isinstance(e, MetricsScraped)]
    assert scraped and all(e.at == 1000.0 - 30.0 for e in scraped)
    for r in http.seen:
        assert r.headers["X-Scope-OrgID"] == "cell-a"
        assert r.headers["X-Api-Key"] == "key-value-456"
        assert r.headers["Authorization"] == "Bearer token-number-1"
    # Prometheus' "now" is read 30 s back; the rest of the poll is pinned to that instant
    params = [parse_qs(urlsplit(str(r.url)).query) for r in http.seen]
    assert params[0]["query"] == ["time()"] and params[0]["time"] == [f"{PROM_TIME:.3f}"]
    assert all(p["time"] == [f"{PROM_TIME:.3f}"] for p in params[1:])
    # a credential-like header is a secret; a tenant name is not
    assert "key-value-456" not in secrets.scrub("key-value-456")
    assert "cell-a" in secrets.scrub("cell-a")


class RefusesFirst(FakeHttp):
    """Answers 401 to the first token, then as Prometheus."""

    def send(self, request: requests.PreparedRequest, **kw: Any) -> requests.Response:  # type: ignore[override]
        if request.headers.get("Authorization") == "Bearer token-number-1":
            self.seen.append(request)
            resp = requests.Response()
            resp.status_code, resp._content = 401, b"token expired"
            resp.url, resp.request = str(request.url), request
            return resp
        return super().send(request, **kw)


def test_a_refused_token_fails_one_poll_and_the_next_asks_for_a_new_one(tmp_path: Path) -> None:
    argv = _script(tmp_path, "print(f'token-number-{n}')\n")
    client = prometheus_client(
        "https://prom.example",
        CostMeter(),
        auth=PrometheusAuth(token_command=argv),
        secrets=Secrets(),
    )
    http = RefusesFirst(apiserver_answer)
    faked(client, http)
    first, _ = _poll(client)
    assert not first.healthy and "401" in first.last_error
    second, _ = _poll(client)
    assert second.healthy
    assert http.seen[-1].headers["Authorization"] == "Bearer token-number-2"


def test_the_options_and_what_they_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"KTOP_CONFIG_DIR": str(tmp_path)}
    args = parse_args(
        [
            "--prometheus-token-command", "gcloud auth print-access-token",
            "--prometheus-header", "X-Scope-OrgID: cell-a",
            "--prometheus-header", "X-Other:b",
            "--prometheus-offset", "30",
        ],
        environ=env,
    )  # fmt: skip
    auth = prometheus_auth(args)
    assert auth.token_command == ("gcloud", "auth", "print-access-token")
    assert auth.headers == ("X-Scope-OrgID: cell-a", "X-Other:b") and auth.offset_s == 30.0
    assert split_header("X-Other:b") == ("X-Other", "b")
    for bad in (["--prometheus-header", "no colon"], ["--prometheus-offset", "601"]):
        with pytest.raises(SystemExit) as code:
            parse_args(bad, environ=env)
        assert code.value.code == 2
    assert "NAME:VALUE" in capsys.readouterr().err
    # config.toml: the same keys, a list for the repeatable header
    (tmp_path / "config.toml").write_text(
        'prometheus-header = ["X-Scope-OrgID: cell-b"]\nprometheus-offset = 15\n'
    )
    from_config = prometheus_auth(parse_args([], environ=env))
    assert from_config.headers == ("X-Scope-OrgID: cell-b",) and from_config.offset_s == 15.0
