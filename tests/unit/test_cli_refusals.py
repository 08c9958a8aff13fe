"""Bad command lines, config files and themes are refused at start: exit status 2, one line
on standard error naming the option or file and what was expected, no traceback."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktop import compose
from ktop.cli import main

STATUS = """
[status]
ok = "green"
warn = "yellow"
bad = "bold red"
unknown = "magenta"
stale = "reverse"
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty private config directory; the crash reports and log out of the home; a
    terminal, so that nothing is refused for the lack of one (the refusals come first)."""
    monkeypatch.setenv("KTOP_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("KTOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KTOP_THEME", raising=False)
    monkeypatch.setattr(compose, "terminal_problem", lambda: "no terminal in a unit test")
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``main(argv)``'s exit status and standard error."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


def assert_refused(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Exit 2, one line that holds every needle, no traceback or crash report."""
    code, err = run(argv, capsys)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and "internal error" not in err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def write_theme(home: Path, name: str, body: str) -> Path:
    (home / "themes").mkdir(exist_ok=True)
    path = home / "themes" / f"{name}.toml"
    path.write_text(f'name = "{name}"\n{body}')
    return path


# 1. config.toml and themes with a long number or deep nesting (was exit 70)

LONG = "1" * 5000
DEEP = "[" * 200 + "]" * 200


@pytest.mark.parametrize(
    ("text", "expected"),
    [(f"refresh = {LONG}\n", "at most 100 digits"), (f"apiserver = {DEEP}\n", "64 levels")],
)
def test_config_long_number_or_deep_nesting(
    home: Path, text: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "config.toml").write_text(text)
    assert_refused(["demo"], capsys, str(home / "config.toml"), "line 1", expected)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (f"luminosity_spread = {LONG}\n", "at most 100 digits"),
        (f"description = {DEEP}\n", "64 levels"),
    ],
)
def test_theme_long_number_or_deep_nesting(
    home: Path, body: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_theme(home, "huge", body)
    assert_refused(["demo", "--theme", "huge"], capsys, str(path), "line 2", expected)


# 2. every theme value is checked on load (a non-colour variable crashed ktop demo)


@pytest.mark.parametrize(
    ("variables", "key", "expected"),
    [
        ('"block-cursor-background" = "notacolour"', "block-cursor-background", "a colour"),
        ('"footer-key-foreground" = "red; } X { y: 1"', "footer-key-foreground", "a colour"),
        ('"block-cursor-text-style" = "wobbly"', "block-cursor-text-style", "a text style"),
        ('"block-cursor-background" = "auto 87%"', "block-cursor-background", "a colour"),
        ('"footer-key-foreground" = 3', "footer-key-foreground", "a colour"),
        ('"no-such-variable" = "red"', "no-such-variable", "Textual's theme variables"),
    ],
)
def test_theme_variable_of_the_wrong_kind(
    home: Path, variables: str, key: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_theme(home, "odd", f'[colors]\nprimary = "#112233"\n[variables]\n{variables}\n')
    path.write_text(path.read_text() + STATUS)
    assert_refused(["demo", "--theme", "odd"], capsys, str(path), f"[variables].{key}", expected)


@pytest.mark.parametrize("value", ["nan", "2", "-0.5"])
def test_theme_fraction_out_of_range(
    home: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_theme(home, "frac", f'text_alpha = {value}\n[colors]\nprimary = "#112233"\n')
    path.write_text(path.read_text() + STATUS)
    assert_refused(["demo", "--theme", "frac"], capsys, str(path), "text_alpha", "from 0 to 1")


def test_theme_variables_textual_takes_are_accepted(home: Path) -> None:
    from ktop.ui.theming import load_theme

    path = write_theme(
        home,
        "fine",
        '[colors]\nprimary = "#112233"\n[variables]\n"block-cursor-background" = "ansi_red"\n'
        '"text-muted" = "auto 60%"\n"link-style" = "bold not underline"\n'
        '"footer-key-background" = "transparent"\n' + STATUS,
    )
    assert load_theme(path).theme.variables["text-muted"] == "auto 60%"


# 3. an unknown theme is refused at start (was a toast)


def test_unknown_theme_lists_the_known(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_refused(["--theme", "nope", "demo"], capsys, "--theme 'nope'", "ktop-dark", "nord")


def test_unknown_theme_from_the_config_file_is_refused_where_it_is_used(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "config.toml").write_text('theme = "nope"\n')
    assert_refused(["demo"], capsys, "--theme 'nope'")
    # snapshot draws no theme: a config default it does not use is no error
    code, err = run(["snapshot", "--demo", "steady", "--nodes", "30", "--zones", "3"], capsys)
    assert code == 0, err


def test_textual_and_user_themes_are_known(home: Path) -> None:
    from ktop.ui.theming import chosen_theme_problem

    write_theme(home, "mine", '[colors]\nprimary = "#112233"\n' + STATUS)
    assert chosen_theme_problem("nord", home / "themes") is None
    assert chosen_theme_problem("mine", home / "themes") is None
    assert chosen_theme_problem("ktop-light", home / "themes") is None


# 4. numeric options without bounds


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["snapshot", "--demo", "steady", "--width", "1000000000"], "--width"),
        (["snapshot", "--demo", "steady", "--width", "10"], "--width"),
        (["demo", "--seed", "9" * 40], "--seed"),
        (["demo", "--seed", "-1"], "--seed"),
        (["record", "-o", "x.ktop", "--demo", "steady", "--max-size", "1"], "--max-size"),
        (["record", "-o", "x.ktop", "--demo", "steady", "--max-size", "1e30"], "--max-size"),
    ],
)
def test_unbounded_numbers_are_bounded(
    home: Path, argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused(argv, capsys, option, "takes")
    assert not (home / "x.ktop").exists()


def test_snapshot_holds_the_terminal_width_to_the_bounds(
    monkeypatch: pytest.MonkeyPatch, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ktop import bounds

    monkeypatch.setenv("COLUMNS", "1000000000")
    code, _ = run(["snapshot", "--demo", "steady", "--nodes", "30"], capsys)
    longest = max(len(line) for line in capsys.readouterr().out.splitlines() or [""])
    assert code == 0
    assert longest <= bounds.SNAPSHOT_WIDTH.high


# 5. URL options are checked as they are parsed

URL_OPTIONS = [
    "--prometheus",
    "--apiserver",
    "--etcd-metrics",
    "--scheduler-metrics",
    "--controller-manager-metrics",
]
BAD_URLS = [
    ("x://", "the scheme is 'x'"),
    ("p:9090", "scheme"),
    ("https://", "no host"),
    ("https://h:99999", "port"),
    ("https://h:0", "port"),
    ("https://h:port", "port"),
    ("https://h x:1", "spaces or control characters"),
    ("https://h:1/\x1b[2J", "spaces or control characters"),
    ("https://a b.example", "spaces or control characters"),
    ("https://ho^st:1", "host"),
]


@pytest.mark.parametrize("option", URL_OPTIONS)
@pytest.mark.parametrize(("value", "problem"), BAD_URLS)
def test_malformed_url_is_refused(
    home: Path, option: str, value: str, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused([option, value], capsys, f"argument {option}", problem)


@pytest.mark.parametrize("option", URL_OPTIONS)
def test_url_message_never_repeats_user_information(
    home: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = assert_refused([option, "https://admin:hunter2@h:99999"], capsys, "***@h")
    assert "hunter2" not in err and "admin" not in err


def test_url_in_config_file_is_checked(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "config.toml").write_text('etcd-metrics = ["https://e:2381", "ftp://u:pw@e"]\n')
    err = assert_refused(["demo"], capsys, str(home / "config.toml"), "etcd-metrics", "'ftp'")
    assert "pw" not in err


@pytest.mark.parametrize(
    "value",
    ["auto", "k8s://monitoring/prometheus-k8s:web", "http://[::1]:9090", "https://P.example/p/"],
)
def test_prometheus_addresses_the_code_takes_are_accepted(value: str) -> None:
    from ktop.commands.options import prometheus_address

    assert prometheus_address(value) == value


def test_k8s_prometheus_address_of_the_wrong_shape(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused(["--prometheus", "k8s://x"], capsys, "k8s://NAMESPACE/SERVICE:PORT")


@pytest.mark.fuzz
@given(st.text(max_size=60), st.text(min_size=4, max_size=12, alphabet="qwxz"))
def test_url_check_refuses_with_a_message_or_accepts(rest: str, password: str) -> None:
    from ktop.commands.options import url

    text = f"https://user:{password}@{rest}"
    try:
        assert url(text) == text
    except argparse.ArgumentTypeError as exc:
        assert password not in str(exc)
        assert "\n" not in str(exc)


# 6. the always-on recording options


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["--retain", "1h"], ["--retain goes with --record-dir"]),
        (["demo", "--max-disk", "2G"], ["--max-disk goes with --record-dir"]),
        (["--record-dir", ""], ["--record-dir", "expected a directory"]),
        (["snapshot", "--record-dir", "rec"], ["--record-dir is not used here"]),
        (["record", "-o", "x.ktop", "--record-dir", "rec"], ["--record-dir is not used here"]),
        (["triage", "--record-dir", "rec"], ["--record-dir is not used here"]),
        (["replay", "x.ktop", "--retain", "1h"], ["--retain is not used here"]),
    ],
)
def test_recording_options_that_would_be_ignored(
    home: Path, argv: list[str], needles: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused(argv, capsys, *needles)
    assert not (home / "rec").exists()


def test_record_dir_that_is_a_file(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / "a-file"
    path.write_text("mine")
    assert_refused(["demo", "--record-dir", str(path)], capsys, "--record-dir", "a file")
    assert_refused(["--record-dir", str(path / "sub")], capsys, "--record-dir", "cannot be made")
    assert path.read_text() == "mine"


def test_record_dir_from_the_config_file(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / "a-file"
    path.write_text("mine")
    (home / "config.toml").write_text(f'record-dir = "{path}"\nretain = "2h"\n')
    # used by the dashboard and demo: checked, and the line says where it came from
    assert_refused(["demo"], capsys, "record-dir (config.toml)", "a file")
    # not used by snapshot: no error
    code, err = run(["snapshot", "--demo", "steady", "--nodes", "30"], capsys)
    assert code == 0, err


def test_retain_with_record_dir_from_the_config_is_fine(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "config.toml").write_text(f'record-dir = "{home / "rec"}"\n')
    code, err = run(["demo", "--retain", "2h"], capsys)
    assert (code, err.strip()) == (2, "ktop demo: no terminal in a unit test")


# 7. other options that were silently ignored


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["snapshot", "--theme", "ktop-light"], "--theme is not used here"),
        (["snapshot", "--at", "30"], "--at is not used here: it goes with --demo"),
        (["snapshot", "--demo", "steady", "--context", "c"], "--context is not used here"),
        (["demo", "--context", "c"], "--context is not used here: ktop demo plays"),
        (["demo", "--apiserver", "https://a:6443"], "--apiserver is not used here"),
        (["record", "-o", "x.ktop", "--from", "r.ktop", "--duration", "5"], "--duration"),
        (["record", "-o", "x.ktop", "--nodes", "50"], "--nodes is not used here"),
        (["replay", "r.ktop", "--info", "--speed", "2"], "--speed is not used here"),
        (["replay", "r.ktop", "--prometheus", "auto"], "--prometheus is not used here"),
        (["triage", "--bundle", "b", "--window", "30"], "--window is not used here"),
        (["triage", "--refresh", "2"], "--refresh is not used here"),
        (["fleet", "--nodes", "50"], "--nodes is not used here: it goes with --demo"),
        (["fleet", "--demo", "--metrics-only-above", "9"], "--metrics-only-above"),
        (["bundle", "capture", "d", "--ascii"], "--ascii is not used here"),
    ],
)
def test_options_the_command_would_ignore(
    home: Path, argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused(argv, capsys, needle)
    assert not (home / "x.ktop").exists()
