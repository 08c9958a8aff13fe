"""Every file ktop reads is bounded: a FIFO, /dev/zero, an oversized file and a planted
secret, for each kind of file (kubeconfig, files it names, config, theme, token file,
recording, bundle file).

A FIFO with no writer blocks a plain ``open``; each case runs under a deadline far
below the time a hang would take, and the refusal must name the path.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ktop import files
from ktop.cli import main
from ktop.config import ConfigError, read_config
from ktop.record.reader import Recording
from ktop.scrub import Secrets
from ktop.sources.bundle.reader import read_bundle
from ktop.sources.kubeconfig import KubeconfigError, load_context
from ktop.ui.theming import user_themes

SECRET = "S3cretPlanted9f8e7d6c"
DEADLINE_S = 10.0
"""A refusal is immediate; a hang on a FIFO would last until the test run is killed."""


def _within_deadline(call: Callable[[], object]) -> BaseException | None:
    """Run ``call`` in a thread; the exception it raised, or None. Fails on a hang."""
    box: list[BaseException | None] = [None]

    def target() -> None:
        try:
            call()
        except BaseException as exc:
            box[0] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(DEADLINE_S)
    if t.is_alive():
        # Unblock a reader stuck on a FIFO so the thread can end, then fail.
        pytest.fail(f"{call} did not return within {DEADLINE_S}s")
    return box[0]


def _make(kind: str, path: Path, limit: files.FileLimit) -> Path:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "oversized":
        with path.open("wb") as f:
            f.truncate(limit.max_bytes + 1)  # sparse: costs no disk
    return path


KINDS = ["fifo", "dev-zero", "oversized"]
WORDS = {"fifo": "a FIFO", "dev-zero": "a character device", "oversized": "over the limit"}


@pytest.mark.parametrize("kind", KINDS)
def test_kubeconfig(kind: str, tmp_path: Path) -> None:
    path = _make(kind, tmp_path / "kubeconfig", files.KUBECONFIG)
    exc = _within_deadline(lambda: load_context(str(path), None, secrets=Secrets()))
    assert isinstance(exc, KubeconfigError)
    assert str(path) in str(exc) and WORDS[kind] in str(exc)


@pytest.mark.parametrize("field", ["certificate-authority", "client-key", "tokenFile"])
@pytest.mark.parametrize("kind", KINDS)
def test_files_a_kubeconfig_names(kind: str, field: str, tmp_path: Path) -> None:
    limit = files.TOKEN if field == "tokenFile" else files.CERTIFICATE
    named = _make(kind, tmp_path / field, limit)
    cluster: dict[str, object] = {"server": "https://127.0.0.1:1"}
    user: dict[str, object] = {}
    (cluster if field == "certificate-authority" else user)[field] = str(named)
    if field == "client-key":
        user["client-certificate"] = str(named)
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(
        json.dumps(
            {
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                "clusters": [{"name": "k", "cluster": cluster}],
                "users": [{"name": "u", "user": user}],
            }
        )
    )
    exc = _within_deadline(lambda: load_context(str(cfg), None, secrets=Secrets()))
    assert isinstance(exc, KubeconfigError)
    assert str(named) in str(exc) and WORDS[kind] in str(exc)


def test_a_kubeconfig_from_process_substitution_is_still_read(tmp_path: Path) -> None:
    # An anonymous pipe (what `<(...)` gives) is the one special file ktop reads.
    read_fd, write_fd = os.pipe()
    text = (
        '{"current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "k"}}],'
        ' "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}]}'
    )
    os.write(write_fd, text.encode())
    os.close(write_fd)
    try:
        resolved = load_context(f"/proc/self/fd/{read_fd}", None, secrets=Secrets())
    finally:
        os.close(read_fd)
    assert resolved.info.server == "https://127.0.0.1:1"


def test_a_pipe_that_never_ends_is_given_up_on_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "PIPE_TIMEOUT_S", 0.5)
    read_fd, write_fd = os.pipe()
    try:
        started = time.monotonic()
        exc = _within_deadline(
            lambda: files.read_bounded(
                f"/proc/self/fd/{read_fd}", files.KUBECONFIG, allow_pipe=True
            )
        )
        assert isinstance(exc, files.FileRefusedError)
        assert "pipe time limit" in str(exc)
        assert time.monotonic() - started < DEADLINE_S
    finally:
        os.close(read_fd)
        os.close(write_fd)


@pytest.mark.parametrize("kind", KINDS)
def test_config_file(kind: str, tmp_path: Path) -> None:
    path = _make(kind, tmp_path / "config.toml", files.CONFIG)
    exc = _within_deadline(lambda: read_config(path))
    assert isinstance(exc, ConfigError)
    assert str(path) in str(exc) and WORDS[kind] in str(exc)


def test_a_password_in_the_config_file_is_never_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text(
        f'prometheus = ["https://admin:{SECRET}@prom.example:9090"]\n'
    )
    monkeypatch.setenv("KTOP_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(SystemExit) as code:
        main(["snapshot", "--demo", "steady"])
    err = capsys.readouterr().err
    assert code.value.code == 2
    assert SECRET not in err and "admin" not in err
    assert "prometheus: expected a string" in err and "prom.example:9090" in err


@pytest.mark.parametrize("kind", [*KINDS, "secret"])
def test_user_theme(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "evil.toml"
    if kind == "secret":
        path.write_text(f'name = "evil"\n[variables]\nprimary = ["token={SECRET}"]\n')
    else:
        _make(kind, path, files.THEME)
    box: list[tuple[object, list[str]]] = []
    assert _within_deadline(lambda: box.append(user_themes(tmp_path))) is None
    themes, errors = box[0]
    assert themes == [] and len(errors) == 1
    assert str(path) in errors[0]
    if kind == "secret":
        assert SECRET not in errors[0]
    else:
        assert WORDS[kind] in errors[0]


@pytest.mark.parametrize("kind", KINDS)
def test_prometheus_token_file(kind: str, tmp_path: Path) -> None:
    from ktop.scrub import Secrets
    from ktop.sources.live.prometheus_connect import PrometheusConfigError, _file_token

    path = _make(kind, tmp_path / "token", files.TOKEN)
    # Read once as the client is built: refused then, naming the file and the option.
    exc = _within_deadline(lambda: _file_token(str(path), Secrets()))
    assert isinstance(exc, PrometheusConfigError)
    assert str(path) in str(exc) and WORDS[kind] in str(exc)
    assert "--prometheus-token-file" in str(exc)


@pytest.mark.parametrize("kind", KINDS)
def test_recording(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "RECORDING", files.FileLimit("recording", 1024))
    monkeypatch.setattr("ktop.record.reader.RECORDING", files.RECORDING)
    path = _make(kind, tmp_path / "rec.ktrec", files.RECORDING)
    exc = _within_deadline(lambda: Recording(path))
    assert isinstance(exc, files.FileRefusedError)
    assert str(path) in str(exc) and WORDS[kind] in str(exc)


@pytest.mark.parametrize("kind", KINDS)
def test_bundle_file(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A bundle file that is not a file is named in the bundle's errors; the rest is read.
    monkeypatch.setattr(
        "ktop.sources.bundle.reader.BUNDLE_FILE", files.FileLimit("bundle file", 4096)
    )
    fixture = Path(__file__).parents[1] / "fixtures/nri-k8s-1.35_etcd_metrics.prom"
    inst = tmp_path / "metrics" / "etcd" / "m0"
    inst.mkdir(parents=True)
    (inst / "1700000000.prom").write_bytes(fixture.read_bytes()[:4000])
    bad = _make(kind, inst / "1700000030.prom", files.FileLimit("bundle file", 4096))
    box: list[object] = []
    assert _within_deadline(lambda: box.append(read_bundle(tmp_path))) is None
    read = box[0]
    errors = [e for e in read.errors if e.file.endswith("1700000030.prom")]  # type: ignore[attr-defined]
    assert len(errors) == 1, read.errors  # type: ignore[attr-defined]
    if kind == "oversized":
        assert "over the limit" in errors[0].message
    else:
        assert "not a regular file" in errors[0].message
    assert bad.name in errors[0].file
    scrapes = [e for e in read.events if type(e).__name__ == "MetricsScraped"]  # type: ignore[attr-defined]
    assert len(scrapes) == 1  # the good file was still read
