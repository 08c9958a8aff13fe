"""Token and password files are read as kubectl reads them (surrounding whitespace
trimmed, an inner control character refused naming the file), and every kubeconfig error
names the file the entry came from."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from ktop.cli import main
from ktop.scrub import Secrets
from ktop.sources.kubeconfig import KubeconfigError, load_context
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.prometheus_connect import (
    PrometheusAuth,
    PrometheusConfigError,
    prometheus_client,
)
from tests.unit.loopback import LoopbackServer, version_only

TOKEN = "abcd1234efgh5678TOKEN"


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    s = LoopbackServer(version_only)
    yield s
    s.stop()


def _config(
    user: dict[str, Any] | None = None,
    server: str = "https://127.0.0.1:1",
    *,
    contexts: bool = True,
    clusters: bool = True,
    users: bool = True,
) -> dict[str, Any]:
    cfg: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "current-context": "c"}
    if contexts:
        cfg["contexts"] = [{"name": "c", "context": {"cluster": "k", "user": "u"}}]
    if clusters:
        cfg["clusters"] = [{"name": "k", "cluster": {"server": server}}]
    if users:
        cfg["users"] = [{"name": "u", "user": user if user is not None else {"token": "t0k3n"}}]
    return cfg


def _write(path: Path, cfg: dict[str, Any]) -> Path:
    path.write_text(json.dumps(cfg))
    return path


# ---------------------------------------------------------------- token files


def test_token_file_ending_in_a_newline_is_trimmed(
    tmp_path: Path, server: LoopbackServer, capfd: pytest.CaptureFixture[str]
) -> None:
    # As the author wrote it: echo TOKEN > file.
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    cfg = _write(tmp_path / "config", _config({"tokenFile": str(token)}, server.url))
    code = main(["--kubeconfig", str(cfg), "snapshot", "--timeout", "1"])
    err = capfd.readouterr().err
    assert code != 70, err
    assert ("/version", f"Bearer {TOKEN}") in server.seen


@pytest.mark.parametrize("inner", ["\n", "\r", "\x00", "\t", "\x7f"])
def test_token_file_with_an_inner_control_character_is_refused(
    inner: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    token = tmp_path / "token"
    token.write_text(f"abcd{inner}efgh\n")
    cfg = _write(tmp_path / "config", _config({"tokenFile": str(token)}))
    assert main(["--kubeconfig", str(cfg), "snapshot"]) == 2
    err = capfd.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(token) in err and str(cfg) in err
    assert "control character" in err


def test_inline_token_with_a_line_break_is_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cfg = _write(tmp_path / "config", _config({"token": "abcd\nefgh"}))
    assert main(["--kubeconfig", str(cfg), "snapshot"]) == 2
    err = capfd.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(cfg) in err and "control character" in err


def test_missing_token_file_says_no_such_file(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cfg = _write(tmp_path / "config", _config({"tokenFile": "/nonexistent/token"}))
    assert main(["--kubeconfig", str(cfg), "snapshot"]) == 2
    err = capfd.readouterr().err
    assert "cannot read /nonexistent/token: No such file or directory" in err


@pytest.mark.parametrize("option", ["token", "password"])
def test_prometheus_secret_files_are_trimmed(option: str, tmp_path: Path) -> None:
    path = tmp_path / option
    path.write_text(f"  {TOKEN}\r\n")
    if option == "token":
        auth = PrometheusAuth(bearer_token_file=str(path))
        expected = f"Bearer {TOKEN}"
    else:
        auth = PrometheusAuth(username="admin", password_file=str(path))
        expected = "Basic " + base64.b64encode(f"admin:{TOKEN}".encode()).decode()
    client = prometheus_client("http://127.0.0.1:1", CostMeter(), auth=auth, secrets=Secrets())
    try:
        request = requests.Request("GET", "http://127.0.0.1:1/", auth=client.auth).prepare()
    finally:
        client.close()
    assert request.headers["Authorization"] == expected


@pytest.mark.parametrize("option", ["token", "password"])
def test_prometheus_secret_file_with_a_control_character_is_refused(
    option: str, tmp_path: Path
) -> None:
    path = tmp_path / option
    path.write_text("abcd\x00efgh\n")
    auth = (
        PrometheusAuth(bearer_token_file=str(path))
        if option == "token"
        else PrometheusAuth(username="admin", password_file=str(path))
    )
    with pytest.raises(PrometheusConfigError) as info:
        prometheus_client("http://127.0.0.1:1", CostMeter(), auth=auth, secrets=Secrets())
    message = str(info.value)
    assert str(path) in message and f"--prometheus-{option}-file" in message
    assert "\n" not in message and "control character" in message


# ---------------------------------------------------------------- errors name the file


BROKEN: dict[str, tuple[dict[str, Any], str]] = {
    "cluster without server": ({"clusters": [{"name": "k", "cluster": {"x": 1}}]}, "clusters"),
    "server not a URL": (
        {"clusters": [{"name": "k", "cluster": {"server": "ftp://h"}}]},
        "clusters",
    ),
    "bad CA base64": (
        {
            "clusters": [
                {
                    "name": "k",
                    "cluster": {
                        "server": "https://h",
                        "certificate-authority-data": "!!",
                    },
                }
            ]
        },
        "clusters",
    ),
    "missing CA file": (
        {
            "clusters": [
                {"name": "k", "cluster": {"server": "https://h", "certificate-authority": "/no"}}
            ]
        },
        "clusters",
    ),
    "user not a mapping": ({"users": [{"name": "u", "user": "x"}]}, "users"),
    "token not a string": ({"users": [{"name": "u", "user": {"token": 5}}]}, "users"),
    "bad key base64": ({"users": [{"name": "u", "user": {"client-key-data": "!!"}}]}, "users"),
    "exec without command": (
        {"users": [{"name": "u", "user": {"exec": {"apiVersion": "v1"}}}]},
        "users",
    ),
    "missing token file": (
        {"users": [{"name": "u", "user": {"tokenFile": "/nonexistent/token"}}]},
        "users",
    ),
    "context not a mapping": ({"contexts": [{"name": "c", "context": None}]}, "contexts"),
    "context names no cluster": (
        {"contexts": [{"name": "c", "context": {"cluster": "gone", "user": "u"}}]},
        "contexts",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_every_kubeconfig_error_names_the_file(case: str, tmp_path: Path) -> None:
    """The broken entry lives in the second of two merged files (KUBECONFIG=a:b)."""
    broken, key = BROKEN[case]
    first = {k: v for k, v in _config().items() if k != key}  # all but the broken kind
    a = _write(tmp_path / "a.yaml", first)
    b = _write(tmp_path / "b.yaml", broken)
    with pytest.raises(KubeconfigError) as info:
        load_context(None, None, {"KUBECONFIG": f"{a}:{b}"}, secrets=Secrets())
    assert str(b) in str(info.value), info.value


def test_error_about_the_cluster_entry_names_its_file(tmp_path: Path) -> None:
    # As the author saw it: the entry is named, the file was not.
    cfg = _write(tmp_path / "config", _config(server="not a url"))
    with pytest.raises(KubeconfigError) as info:
        load_context(str(cfg), None, {}, secrets=Secrets())
    assert f"kubeconfig {cfg}: server of cluster 'k'" in str(info.value)


@pytest.mark.parametrize("missing", ["context", "current context"])
def test_errors_about_no_entry_name_every_file(missing: str, tmp_path: Path) -> None:
    a = _write(tmp_path / "a.yaml", _config())
    b = _write(tmp_path / "b.yaml", {"users": []})
    env = {"KUBECONFIG": f"{a}:{b}"}
    if missing == "current context":
        a.write_text(json.dumps({**_config(), "current-context": ""}))
    with pytest.raises(KubeconfigError) as info:
        load_context(None, "gone" if missing == "context" else None, env, secrets=Secrets())
    assert str(a) in str(info.value) and str(b) in str(info.value)


def test_credential_errors_after_loading_name_the_file(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exec plugin that cannot start: found when the credentials are loaded, after the
    files were checked; the user entry lives in the second file."""
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "/no/plugin"}}
    a = _write(tmp_path / "a.yaml", _config(users=False))
    b = _write(tmp_path / "b.yaml", {"users": [{"name": "u", "user": user}]})
    monkeypatch.setenv("KUBECONFIG", f"{a}:{b}")
    assert main(["snapshot"]) == 2
    err = capfd.readouterr().err
    assert str(b) in err and "could not be started" in err
    assert len(err.strip().splitlines()) == 1
