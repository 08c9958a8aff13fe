"""Options mean the same before and after a subcommand; defaults come from env, config, table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from ktop import compose
from ktop.cli import DEFAULTS, LOW_BANDWIDTH_REFRESH_S, build_parser, main, parse_args
from ktop.lab import kind as kind_module
from ktop.lab.kind import KIND_SCENARIOS, KindDemoResult
from ktop.sources.live import client as live_client

# Every common option: the words given on the command line and the value they must give.
# The values are written out here, not read from the parser.
COMMON: list[tuple[list[str], str, Any]] = [
    (["--theme", "ktop-light"], "theme", "ktop-light"),
    (["--rack-label", "example.com/rack"], "rack_label", "example.com/rack"),
    (["--refresh", "2.5"], "refresh", 2.5),
    (["--low-bandwidth"], "low_bandwidth", True),
    (["--ascii"], "ascii", True),
    (["--no-ascii"], "ascii", False),
    (["--prod-pattern", "^live-"], "prod_pattern", "^live-"),
    (["--context", "cell-a"], "context", "cell-a"),
    (["--kubeconfig", "/k/config"], "kubeconfig", "/k/config"),
    (["--prometheus", "http://p:9090"], "prometheus", "http://p:9090"),
    (["--prometheus-token-file", "p.token"], "prometheus_token_file", "p.token"),
    (["--prometheus-user", "reader"], "prometheus_user", "reader"),
    (["--prometheus-password-file", "p.pass"], "prometheus_password_file", "p.pass"),
    (["--prometheus-ca", "p-ca.pem"], "prometheus_ca", "p-ca.pem"),
    (["--prometheus-cert", "p-c.pem"], "prometheus_cert", "p-c.pem"),
    (["--prometheus-key", "p-k.pem"], "prometheus_key", "p-k.pem"),
    (["--prometheus-insecure"], "prometheus_insecure", True),
    (["--prometheus-token-command", "gcloud auth x"], "prometheus_token_command", "gcloud auth x"),
    (["--prometheus-header", "X-Scope-OrgID: a"], "prometheus_header", ["X-Scope-OrgID: a"]),
    (["--prometheus-offset", "30"], "prometheus_offset", 30.0),
    (["--prometheus-sigv4"], "prometheus_sigv4", True),
    (["--prometheus-sigv4-region", "us-east-1"], "prometheus_sigv4_region", "us-east-1"),
    (["--metrics-only"], "metrics_only", True),
    (["--cluster-label", "k8s_cluster"], "cluster_label", "k8s_cluster"),
    (["--cluster", "prod-cell-a"], "cluster", "prod-cell-a"),
    (["--no-find-components"], "no_find_components", True),
    (["--provider", "openshift"], "provider", "openshift"),
    (["--apiserver", "https://a:6443"], "apiserver", ["https://a:6443"]),
    (["--etcd-metrics", "https://e:2381"], "etcd_metrics", ["https://e:2381"]),
    (["--etcd-cert", "c.pem"], "etcd_cert", "c.pem"),
    (["--etcd-key", "k.pem"], "etcd_key", "k.pem"),
    (["--etcd-ca", "ca.pem"], "etcd_ca", "ca.pem"),
    (["--scheduler-metrics", "https://s:10259"], "scheduler_metrics", ["https://s:10259"]),
    (
        ["--controller-manager-metrics", "https://c:10257"],
        "controller_manager_metrics",
        ["https://c:10257"],
    ),
    (["--component-ca", "comp.pem"], "component_ca", "comp.pem"),
    (["--insecure-components"], "insecure_components", True),
    (["--scrape-interval", "30"], "scrape_interval", 30.0),
    (["--record-dir", "rec"], "record_dir", "rec"),
    (["--retain", "6h"], "retain", 21600.0),
    (["--max-disk", "3G"], "max_disk", 3 * 1024**3),
]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An environment whose config directory is empty and private to the test."""
    return {"KTOP_CONFIG_DIR": str(tmp_path)}


def test_every_common_option_is_covered() -> None:
    tested = {dest for _, dest, _ in COMMON}
    assert tested == set(DEFAULTS)


@pytest.mark.parametrize("position", ["before", "after"])
@pytest.mark.parametrize(("words", "dest", "expected"), COMMON, ids=[w[0] for w, _, _ in COMMON])
def test_option_means_the_same_before_and_after_the_subcommand(
    words: list[str], dest: str, expected: Any, position: str, env: dict[str, str]
) -> None:
    argv = [*words, "demo"] if position == "before" else ["demo", *words]
    args = parse_args(argv, env)
    assert args.command == "demo"
    assert getattr(args, dest) == expected
    assert getattr(args, dest) != DEFAULTS[dest]


@pytest.mark.parametrize(("words", "dest", "expected"), COMMON, ids=[w[0] for w, _, _ in COMMON])
def test_option_without_subcommand(
    words: list[str], dest: str, expected: Any, env: dict[str, str]
) -> None:
    args = parse_args(words, env)
    assert args.command is None
    assert getattr(args, dest) == expected


def test_defaults_are_applied_once(env: dict[str, str]) -> None:
    for argv in ([], ["demo"]):
        args = parse_args(argv, env)
        for dest, default in DEFAULTS.items():
            assert getattr(args, dest) == default, dest


def test_after_wins_over_before(env: dict[str, str]) -> None:
    args = parse_args(["--refresh", "3", "demo", "--refresh", "4"], env)
    assert args.refresh == 4.0


def test_low_bandwidth_raises_refresh(env: dict[str, str]) -> None:
    assert parse_args(["demo", "--low-bandwidth"], env).refresh == LOW_BANDWIDTH_REFRESH_S
    assert parse_args(["--low-bandwidth", "--refresh", "9"], env).refresh == 9.0


def test_config_file_gives_defaults(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "config.toml").write_text(
        'theme = "colorblind"\nrefresh = 3\nrack-label = "r/rack"\n'
        'apiserver = ["https://a:1", "https://b:2"]\nascii = true\n'
    )
    args = parse_args(["demo"], env)
    assert (args.theme, args.refresh, args.rack_label) == ("colorblind", 3.0, "r/rack")
    assert args.apiserver == ["https://a:1", "https://b:2"]
    assert args.ascii is True
    # The command line wins, before or after the subcommand.
    assert parse_args(["--theme", "ansi", "demo"], env).theme == "ansi"
    assert parse_args(["demo", "--refresh", "1"], env).refresh == 1.0


def test_env_theme_between_command_line_and_config(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "config.toml").write_text('theme = "colorblind"\n')
    assert parse_args([], {**env, "KTOP_THEME": "monochrome"}).theme == "monochrome"
    assert parse_args(["--theme", "ansi"], {**env, "KTOP_THEME": "monochrome"}).theme == "ansi"


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ('colour = "x"\n', ["config.toml", "unknown option colour"]),
        ('refresh = "fast"\n', ["config.toml", "refresh", "a duration", "--refresh"]),
        ("ascii = 1\n", ["config.toml", "ascii", "true or false"]),
        ("apiserver = 3\n", ["config.toml", "apiserver", "list of strings"]),
        ("theme = [\n", ["config.toml", "not valid TOML"]),
        ("[demo]\nnodes = 3\n", ["config.toml", "demo", "tables are not options"]),
    ],
)
def test_broken_config_names_file_and_key(
    tmp_path: Path,
    env: dict[str, str],
    text: str,
    needles: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(SystemExit) as exit_:
        parse_args(["demo"], env)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "config.toml") in err
    for needle in needles:
        assert needle in err


def test_help_says_read_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "only reads the cluster" in out


def test_demo_kind_without_scenario_picks_one_kind_can_run(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[tuple[str, ...]] = []

    def fake_kind_demo(**kwargs: Any) -> KindDemoResult:
        asked.append(tuple(kwargs["scenarios"]))
        return KindDemoResult(ok=False, message="no cluster in a unit test")

    monkeypatch.setattr(kind_module, "missing_kind_tools", list)
    monkeypatch.setattr(kind_module, "kind_demo", fake_kind_demo)
    # The dashboard refuses a non-terminal before it creates anything; pytest's stdout is not one.
    monkeypatch.setattr(compose, "terminal_problem", lambda: None)
    monkeypatch.setenv("KTOP_CONFIG_DIR", env["KTOP_CONFIG_DIR"])
    assert main(["demo", "--kind"]) == 1
    assert len(asked) == 1 and len(asked[0]) == 1
    assert asked[0][0] in KIND_SCENARIOS
    assert "no cluster in a unit test" in capsys.readouterr().err


def test_parser_adds_common_options_to_demo() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    demo_dests = {a.dest for a in sub.choices["demo"]._actions}
    assert set(DEFAULTS) <= demo_dests


def test_bad_prod_pattern(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse_args(["demo", "--prod-pattern", "prod("], env)
    assert exit_.value.code == 2
    assert "--prod-pattern 'prod('" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cluster", "prod-a"], "--cluster selects one cluster of a Prometheus"),
        (
            ["--prometheus", "http://p:9090", "--cluster", "a", "--cluster-label", "k8s-cluster"],
            "--cluster-label: 'k8s-cluster' is not a Prometheus label name",
        ),
    ],
)
def test_cluster_options_that_cannot_work_are_refused_before_connecting(
    argv: list[str],
    message: str,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("connected")

    monkeypatch.setattr(live_client, "connect", never)
    monkeypatch.setenv("KTOP_CONFIG_DIR", env["KTOP_CONFIG_DIR"])
    assert main(argv) == 2
    assert f"ktop: {message}" in capsys.readouterr().err
