"""The command line: versions, lists, clear errors, honest 'not yet'."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktop import __version__
from ktop.cli import main
from ktop.sources.sim.scenarios import SCENARIOS


@pytest.fixture(autouse=True)
def _cache_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """main() installs its log handler; keep it (and any crash report) out of the home."""
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"ktop {__version__}"


@pytest.mark.parametrize(
    "argv", [["--help"], ["demo", "--help"], ["replay", "--help"], ["record", "--help"]]
)
def test_help_everywhere(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0
    assert "usage: ktop" in capsys.readouterr().out


def test_demo_list_names_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(SCENARIOS)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_unknown_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--scenario", "meteor-strike"]) == 2
    err = capsys.readouterr().err
    assert "unknown scenario 'meteor-strike'" in err and "zone-outage" in err


def test_unknown_context_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = Path(__file__).parent.parent / "fixtures" / "kubeconfig_k8s-client-js_testdata.yaml"
    assert main(["--kubeconfig", str(cfg), "--context", "prod-cell-a"]) == 2
    err = capsys.readouterr().err
    assert "context 'prod-cell-a' not found" in err and "context1" in err


def test_unreachable_server_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Port 1 on loopback: nothing listens there, the connection is refused at once.
    cfg = tmp_path / "config"
    cfg.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1', "
        "insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: s3cr3t-token}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    assert main(["--kubeconfig", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "cannot reach https://127.0.0.1:1" in err
    assert "s3cr3t-token" not in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["demo", "--refresh", "0"], "--refresh takes 0.1 to 60 seconds"),
        (["demo", "--refresh", "-1"], "--refresh takes"),
        (["demo", "--refresh", "nan"], "--refresh takes"),
        (["--refresh", "inf"], "--refresh takes"),
        (["demo", "--speed", "inf"], "--speed takes 0.1 to 100"),
        (["demo", "--speed", "nan"], "--speed takes"),
        (["demo", "--speed", "0"], "--speed takes"),
        (["demo", "--nodes", "10000000"], "--nodes takes 1 to 100000"),
        (["demo", "--nodes", "0"], "--nodes takes"),
        (["demo", "--nodes", "9" * 5000], "not a whole number"),
        (["demo", "--zones", "0"], "--zones takes 1 to 64"),
        (["--scrape-interval", "0.01"], "--scrape-interval takes 1 to 3600 seconds"),
        (["--scrape-interval", "fast"], "'fast' is not a duration"),
        (["record", "-o", "x", "--duration", "nan"], "--duration takes 1 to 604800 seconds"),
        (["record", "-o", "x", "--duration", "inf"], "--duration takes"),
        (["record", "-o", "x", "--duration", "-5"], "--duration takes"),
        (["record", "-o", "x", "--duration", "0"], "--duration takes"),
        (["replay", "x", "--speed", "nan"], "--speed takes 0.25 to 64"),
        (["replay", "x", "--speed", "inf"], "--speed takes"),
        (["replay", "x", "--speed", "-1"], "--speed takes"),
        (["replay", "x", "--speed", "100"], "--speed takes"),
    ],
)
def test_absurd_values_are_one_line_and_exit_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert words in err
    assert len(err.strip().splitlines()) == 1  # one line, no usage block, no traceback


@pytest.mark.parametrize("argv", [["demo"], ["demo", "--scenario", "zone-outage"]])
def test_demo_without_a_terminal_is_explained(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Under pytest neither stdin nor stdout is a terminal: the demo must refuse, not spin.
    assert main(argv) == 2
    assert "not a terminal" in capsys.readouterr().err


def test_demo_with_stdin_closed_is_explained(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdout", Tty())
    monkeypatch.setattr("sys.stdin", None)  # what Python sets when fd 0 is closed
    assert main(["demo"]) == 2
    monkeypatch.undo()
    assert "standard input is not a terminal" in capsys.readouterr().err


def test_demo_with_stdin_closed_exits_at_once_in_a_real_process(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ktop", "demo"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"KTOP_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "not a terminal" in done.stderr
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("command", [["triage"], ["bundle", "capture", "out"]])
def test_triage_and_capture_with_an_unknown_context_exit_2(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = Path(__file__).parent.parent / "fixtures" / "kubeconfig_k8s-client-js_testdata.yaml"
    args = ["--kubeconfig", str(cfg), *command, "--context", "prod-cell-a"]
    if command[0] == "bundle":
        args[-3] = str(tmp_path / "out")
    assert main(args) == 2
    assert "context 'prod-cell-a' not found" in capsys.readouterr().err
