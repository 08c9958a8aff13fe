"""ktop in a real pty: the bytes it writes with NO_COLOR, with --ascii, and for common TERMs."""

from __future__ import annotations

import re

import pytest

from tests.pty_run import PtyRun, base_env, colour_params, ktop_argv, run_in_pty

pytestmark = pytest.mark.slow

TITLES = (b"APF", b"apiservers", b"etcd", b"scheduler", b"nodes")
NODES_READY = re.compile(rb"\d+/\d+ ready")
DEMO = ("demo", "--scenario", "zone-outage", "--nodes", "300", "--speed", "5")


def overview_drawn(output: bytes) -> bool:
    """The five areas' titles and the nodes summary (data arrived) are on screen."""
    return all(t in output for t in TITLES) and NODES_READY.search(output) is not None


def demo(*extra: str, size: tuple[int, int] = (100, 30), **env: str) -> PtyRun:
    run = run_in_pty(
        ktop_argv(*DEMO, *extra), env=base_env(**env), size=size, until=overview_drawn, seconds=60
    )
    assert overview_drawn(run.output), run.output[-2000:]
    assert run.returncode == 0, run.output[-2000:]
    return run


def test_colour_by_default_and_none_with_no_color() -> None:
    coloured = demo()
    assert colour_params(coloured.output), "the default run must colour (or this test is void)"
    plain = demo(NO_COLOR="1")
    assert colour_params(plain.output) == []


def test_ascii_writes_only_ascii() -> None:
    unicode_run = demo()
    assert not unicode_run.output.isascii(), "the default run must draw glyphs"
    assert demo("--ascii").output.isascii()


def test_c_locale_switches_ascii_on_by_itself() -> None:
    assert demo(LANG="C").output.isascii()


def test_no_ascii_overrides_the_locale() -> None:
    assert not demo("--no-ascii", LANG="C").output.isascii()


@pytest.mark.parametrize(
    ("term", "forbidden"),
    [
        ("xterm", ("38;5", "48;5", "38;2", "48;2")),
        ("xterm-256color", ("38;2", "48;2")),
        ("screen-256color", ("38;2", "48;2")),
        ("tmux-256color", ("38;2", "48;2")),
    ],
)
def test_colour_depth_follows_term(term: str, forbidden: tuple[str, ...]) -> None:
    run = demo(TERM=term)
    params = colour_params(run.output)
    assert params
    assert not [p for p in params if p.startswith(forbidden)]


def test_80x24_draws_every_area() -> None:
    demo(size=(80, 24))


def test_a_minute_of_the_demo_stays_within_the_byte_budget_and_draws_the_screen() -> None:
    """Only changed cells are written, and what is written still draws every area."""
    import pyte

    from benchmarks.bench_terminal import BUDGET_KIB_PER_MIN

    cols, lines = 100, 30
    run = run_in_pty(ktop_argv(*DEMO), env=base_env(), size=(cols, lines), seconds=20)
    assert run.returncode == 0, run.output[-2000:]
    per_minute_kib = len(run.output) * 60 / run.seconds / 1024
    assert per_minute_kib <= BUDGET_KIB_PER_MIN[(cols, lines, "normal")]
    # the screen as a terminal shows it just before quitting (the alternate screen,
    # which pyte lacks, is left after that)
    shown = run.output[: run.output.rindex(b"\x1b[?1049l")].decode("utf-8", "replace")
    term = pyte.Screen(cols, lines)
    pyte.Stream(term).feed(shown)
    text = "\n".join(term.display)
    for title in TITLES:
        assert title.decode() in text, text
    assert NODES_READY.search(text.encode()) is not None, text
