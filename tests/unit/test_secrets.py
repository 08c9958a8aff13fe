"""No secret is ever printed or stored: one known secret planted everywhere a kubeconfig,
an exec plugin or a URL can hold one, driven through the real command-line paths that fail."""

from __future__ import annotations

import base64
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ktop.cli import main
from ktop.crash import install_logging
from ktop.scrub import MASK, Secrets, scrub_shapes
from ktop.sources.live import client
from tests.unit.loopback import LoopbackServer

SECRET = "abcd1234efgh5678SEKRIT7f3a9c"
B64_SECRET = base64.b64encode(SECRET.encode()).decode()
PEM_KEY = f"-----BEGIN EC PRIVATE KEY-----\n{SECRET}\n-----END EC PRIVATE KEY-----\n"
# Port 1 on loopback: nothing listens, the connection is refused at once.
DEAD = "https://127.0.0.1:1"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each case writes its logs and reports to tmp_path (every run of ``main`` is a session
    of its own, which starts knowing no secret)."""
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(client._Loader, "exec_timeout_s", 2.0)
    yield


def _kubeconfig(path: Path, user: dict[str, Any], server: str = DEAD, **cluster: object) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [
                    {
                        "name": "k",
                        "cluster": {"server": server, "insecure-skip-tls-verify": True, **cluster},
                    }
                ],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    return path


def _plugin(tmp_path: Path, body: str, args: list[str] | None = None) -> dict[str, Any]:
    script = tmp_path / "plugin.py"
    script.write_text("import json, sys, time\n" + body)
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script), *(args or [])],
            "env": [{"name": "PLUGIN_SESSION", "value": SECRET}],
            "interactiveMode": "Never",
        }
    }


def _credential(token: str, expiry: object = "2099-01-01T00:00:00Z") -> str:
    status = {"token": token, "expirationTimestamp": expiry}
    return json.dumps(
        {
            "apiVersion": "client.authentication.k8s.io/v1",
            "kind": "ExecCredential",
            "status": status,
        }
    )


USERS: dict[str, dict[str, Any]] = {
    "token": {"token": SECRET},
    "basic auth": {"username": "admin", "password": SECRET},
    "client key data": {"client-certificate-data": B64_SECRET, "client-key-data": B64_SECRET},
    "oidc auth-provider": {
        "auth-provider": {
            "name": "oidc",
            "config": {"id-token": SECRET, "refresh-token": SECRET, "client-secret": SECRET},
        }
    },
    "exec args": {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "/nonexistent/plugin",
            "args": ["--token", SECRET, f"--password={SECRET}"],
        }
    },
}


def _assert_nowhere(capfd: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    out, err = capfd.readouterr()
    assert SECRET not in out and SECRET not in err
    assert B64_SECRET not in out and B64_SECRET not in err
    for f in (tmp_path / "cache").rglob("*"):
        if f.is_file():
            text = f.read_text(errors="replace")
            assert SECRET not in text and B64_SECRET not in text, f
    return err


def _file_users(tmp_path: Path) -> dict[str, dict[str, Any]]:
    token_file = tmp_path / "token"
    token_file.write_text(SECRET)
    key_file = tmp_path / "client.key"
    key_file.write_text(PEM_KEY)
    cert_file = tmp_path / "client.crt"
    cert_file.write_text(f"-----BEGIN CERTIFICATE-----\n{SECRET}\n-----END CERTIFICATE-----\n")
    return {
        "token file": {"tokenFile": str(token_file)},
        "client key file": {"client-certificate": str(cert_file), "client-key": str(key_file)},
    }


@pytest.mark.parametrize("user", [*USERS, "token file", "client key file"])
def test_kubeconfig_credentials_never_printed(
    user: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cfg = _kubeconfig(tmp_path / "config", {**USERS, **_file_users(tmp_path)}[user])
    assert main(["--kubeconfig", str(cfg)]) == 2
    err = _assert_nowhere(capfd, tmp_path)
    assert err.startswith("ktop: ") and len(err.strip().splitlines()) == 1


def test_proxy_url_password_never_printed(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cfg = _kubeconfig(
        tmp_path / "config",
        {"token": "other-token-1"},
        **{"proxy-url": f"http://proxy-user:{SECRET}@127.0.0.1:1"},
    )
    assert main(["--kubeconfig", str(cfg)]) == 2
    _assert_nowhere(capfd, tmp_path)


def test_events_reach_sinks_scrubbed() -> None:
    """What a recording or bundle would store: the hub scrubs before any sink sees it."""
    from ktop.hub import Hub, HubPolicy
    from ktop.model.events import FEED_NODES, FeedFailed, SourceStarted

    secrets = Secrets()
    secrets.add(SECRET)
    seen: list[object] = []
    hub = Hub(policy=HubPolicy(secrets=secrets, sinks=(seen.extend,)))
    hub.ingest(
        [
            SourceStarted(0.0, "live", "c", f"https://u:{SECRET}@h:6443"),
            FeedFailed(1.0, FEED_NODES, f"list nodes: 401 for token {SECRET}"),
            FeedFailed(2.0, FEED_NODES, "Authorization: Bearer zzzzzzzzzzzzzz"),
        ]
    )
    text = repr(seen)
    assert SECRET not in text and "zzzzzzzzzzzzzz" not in text
    assert "h:6443" in text and "list nodes: 401" in text


USER_INFO = "credentials belong in the kubeconfig's user entry"


@pytest.mark.parametrize(
    ("server", "reason"),
    [
        (f"https://admin:{SECRET}@127.0.0.1:1", USER_INFO),
        (f"https://127.0.0.1:1/?token={SECRET}", "cannot reach https://127.0.0.1:1/?token="),
        (f"https://{SECRET}@127.0.0.1:1", USER_INFO),
    ],
)
def test_url_secrets_never_printed(
    server: str, reason: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cfg = _kubeconfig(tmp_path / "config", {"token": "other-token-1"}, server=server)
    assert main(["--kubeconfig", str(cfg)]) == 2
    err = _assert_nowhere(capfd, tmp_path)
    assert reason in err
    assert len(err.strip().splitlines()) == 1


PLUGINS = {
    "prints the token then fails": (
        f"print({_credential(SECRET)!r}); sys.stderr.write('token {SECRET} rejected\\n');"
        " sys.exit(3)",
        "exited with status 3",
    ),
    "stderr only": (
        f"sys.stderr.write('error: could not refresh {SECRET}\\n'); sys.exit(1)",
        "exited with status 1",
    ),
    "not JSON": (f"print('token={SECRET}')", "not JSON"),
    "a number": ("print(12345)", "JSON int"),
    "bad expiry": (f"print({_credential(SECRET, SECRET)!r})", "expirationTimestamp"),
    "hangs": ("time.sleep(60)", "did not answer within 2s"),
    "floods stderr then hangs": (
        "sys.stderr.write('x' * 5_000_000); sys.stderr.flush(); time.sleep(60)",
        "did not answer within 2s",
    ),
}


@pytest.mark.parametrize("case", list(PLUGINS))
def test_exec_plugin_failures_are_one_line_without_secrets(
    case: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    body, expected = PLUGINS[case]
    cfg = _kubeconfig(tmp_path / "config", _plugin(tmp_path, body, ["--session", SECRET]))
    assert main(["--kubeconfig", str(cfg)]) == 2
    err = _assert_nowhere(capfd, tmp_path)
    assert expected in err
    assert len(err.strip().splitlines()) == 1


def test_exec_plugin_token_is_scrubbed_from_later_errors(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # The plugin works; the server is unreachable; then a library echoes the token.
    cfg = _kubeconfig(tmp_path / "config", _plugin(tmp_path, f"print({_credential(SECRET)!r})"))
    assert main(["--kubeconfig", str(cfg)]) == 2
    logging.getLogger("kubernetes_asyncio").error("request failed with Bearer %s", SECRET)
    logging.getLogger("aiohttp.client").warning("header Authorization: %s", SECRET)
    err = _assert_nowhere(capfd, tmp_path)
    assert "cannot reach" in err
    log = (tmp_path / "cache" / "ktop.log").read_text()
    assert "request failed with" in log and MASK in log


def test_crash_report_is_scrubbed_and_named(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _kubeconfig(tmp_path / "config", {"token": SECRET})

    async def broken(conn: object, timeout_s: float = 1.0) -> str:
        token = SECRET  # a local a traceback printer with locals would show
        raise RuntimeError(f"unexpected answer for {token}")

    monkeypatch.setattr(client, "probe", broken)
    assert main(["--kubeconfig", str(cfg)]) == 70
    err = _assert_nowhere(capfd, tmp_path)
    lines = err.strip().splitlines()
    assert len(lines) == 2 and "internal error (RuntimeError" in lines[0]
    reports = list((tmp_path / "cache" / "crash").glob("crash-*.txt"))
    assert len(reports) == 1 and str(reports[0]) in lines[1]
    text = reports[0].read_text()
    assert "Traceback" in text and "def broken" not in text and "in broken" in text
    assert reports[0].stat().st_mode & 0o077 == 0


def test_scrub_shapes() -> None:
    cases = {
        "Authorization: Bearer abc.def-ghi": "abc.def",
        '{"authorization": "Basic dXNlcjpwYXNz"}': "dXNlcjpwYXNz",
        "https://bob:hunter2@example.com:6443/x": "hunter2",
        "GET https://p.example/api?query=up&access_token=t0k3nValue1&x=1": "t0k3nValue1",
        "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk": "LS0tLS1CRUdJTi",
        'password = "p4ss w0rd"': "p4ss",
        "--token s3cr3tv4lue --v=2": "s3cr3tv4lue",
        PEM_KEY: SECRET,
        "jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl end": "eyJzdWIiOiJ4In0",
    }
    for text, secret in cases.items():
        assert secret not in scrub_shapes(text), text
        assert secret not in Secrets().scrub(text), text
    # What is not a secret survives.
    plain = "401 Unauthorized on get /version: credentials expired; context 'c' user 'u'"
    assert scrub_shapes(plain) == plain
    assert Secrets().scrub(plain) == plain
    assert scrub_shapes("cannot reach https://10.0.0.1:6443: refused") == (
        "cannot reach https://10.0.0.1:6443: refused"
    )


def test_known_secrets_are_removed_anywhere() -> None:
    secrets = Secrets()
    secrets.add("Bearer hunter2hunter2")
    assert secrets.scrub("x hunter2hunter2 y") == f"x {MASK} y"
    assert secrets.scrub(ValueError("a hunter2hunter2")) == f"a {MASK}"
    secrets.add("ab")  # too short to register: it would garble every text
    assert secrets.scrub("about") == "about"


def test_opaque_text_loses_token_like_words() -> None:
    out = Secrets().scrub_opaque(f"aws: session {SECRET} expired; run aws sso login")
    assert SECRET not in out and "run aws sso login" in out


def test_log_records_from_libraries_are_scrubbed(tmp_path: Path) -> None:
    secrets = Secrets()
    path = install_logging(secrets, tmp_path)
    secrets.add(SECRET)
    logging.getLogger("kubernetes_asyncio.config").error("exec: %s", SECRET)
    try:
        raise ValueError(f"boom {SECRET}")
    except ValueError:
        logging.getLogger("asyncio").exception("task failed")
    assert path is not None
    text = path.read_text()
    assert "exec: " in text and "boom" in text and SECRET not in text


def test_addresses_shown_never_carry_user_info() -> None:
    from ktop.sources.live.transport import instance_name

    assert instance_name(f"https://admin:{SECRET}@etcd-1:2379/metrics") == "etcd-1:2379"
    assert instance_name(f"https://{SECRET}@10.0.0.1:6443") == "10.0.0.1:6443"


def _scan_outputs(root: Path) -> bytes:
    """Assert that what a command wrote under ``root`` (a recording read frame by frame,
    decompressed; any other file as it is) holds no secret; returns all of it."""
    from ktop.record.format import FormatError
    from ktop.record.reader import Recording

    seen = b""
    for f in root.rglob("*"):
        if not f.is_file():
            continue
        raw = f.read_bytes()
        try:
            with Recording(f) as rec:
                raw += repr(rec.header).encode()
                raw += b"".join(rec._payload(h) for h in [*rec.chunks, *rec.keyframes])
        except (FormatError, OSError, ValueError):
            pass
        assert SECRET.encode() not in raw and B64_SECRET.encode() not in raw, f
        seen += raw
    return seen


async def _echo_credentials(request: web.Request) -> web.StreamResponse:
    """A careless apiserver: it answers ``/version``, and refuses everything else with a
    message that quotes the request's Authorization header and query (a server that logs
    what it got into its errors)."""
    if request.path == "/version":
        return web.json_response({"gitVersion": "v1.30.0"})
    said = f"{request.headers.get('Authorization', '')} {request.query_string}"
    status = {
        "kind": "Status",
        "status": "Failure",
        "code": 403,
        "reason": "Forbidden",
        "message": f"credentials {said} cannot read {request.path}",
    }
    return web.json_response(status, status=403)


def echoing_server() -> LoopbackServer:
    """The careless apiserver on loopback, in its own thread."""
    return LoopbackServer(_echo_credentials)


@pytest.fixture(scope="module")
def echoing() -> Iterator[LoopbackServer]:
    server = echoing_server()
    yield server
    server.stop()


COMMANDS: dict[str, list[str]] = {
    "snapshot": ["snapshot", "--timeout", "3"],
    "triage": ["triage", "--window", "1"],
    "record": ["record", "-o", "{out}/rec.ktop", "--duration", "2"],
    "bundle capture": ["bundle", "capture", "{out}/bundle", "--scrapes", "1"],
    "fleet": ["fleet"],
}


def _plugin_ok(tmp_path: Path) -> dict[str, Any]:
    """An exec plugin that hands out the secret as the bearer token."""
    return _plugin(tmp_path, f"print({_credential(SECRET)!r})", ["--session", SECRET])


@pytest.mark.parametrize("server", ["unreachable", "echoing"])
@pytest.mark.parametrize("user", ["token", "basic auth", "client key data", "exec plugin"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_command_prints_or_writes_a_planted_secret(
    command: str,
    user: str,
    server: str,
    echoing: LoopbackServer,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    users = {**USERS, "exec plugin": _plugin_ok(tmp_path)}
    url = echoing.url if server == "echoing" else f"{DEAD}/?token={SECRET}"
    cfg = _kubeconfig(tmp_path / "config", users[user], server=url)
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.format(out=out) for a in COMMANDS[command]]
    code = main([*argv, "--kubeconfig", str(cfg)])
    out_text, err = capfd.readouterr()
    print(out_text)
    sys.stderr.write(err)
    err = _assert_nowhere(capfd, tmp_path)
    written = _scan_outputs(out)
    if server == "unreachable" or command == "fleet":  # fleet: not a terminal
        assert code == 2 and len(err.strip().splitlines()) == 1
    elif user != "client key data":  # (over http no client key is sent)
        # The server's refusals, which quoted the credential, were reported scrubbed:
        # stored in the recording, said by the others (a bundle stores only what worked).
        said = written if command == "record" else (out_text + err).encode()
        assert b"cannot read" in said and MASK.encode() in said
