"""The command line: versions, lists, clear errors, honest 'not yet'."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktop import __version__
from ktop.cli import main
from ktop.sources.sim.scenarios import SCENARIOS


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"ktop {__version__}"


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["replay", "--help"]])
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


@pytest.mark.parametrize("command", ["record", "replay"])
def test_later_subcommands_say_not_yet(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command]) == 2
    assert "not available in this version yet" in capsys.readouterr().err


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
