"""Parsers stay linear on hostile input: 10 MB inputs built to trigger quadratic work.

Each case is timed against a baseline measured in the same test: parsing the
same amount of real text. A linear parser stays within a small multiple of
it; the quadratic behaviour fixed here took minutes (the bound is generous so
that a loaded machine does not fail it, and far below what quadratic costs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ktop.model.apf_dump import ApfDumpError, parse_priority_levels
from ktop.model.events import Component
from ktop.model.exposition import MAX_ERRORS, MAX_LINE_CHARS, parse_exposition
from ktop.model.failed_scheduling import parse_failed_scheduling
from ktop.model.wanted import FAMILIES

SIZE = 10 * 1024 * 1024
FIXTURES = Path(__file__).parent.parent / "fixtures"
REAL = (FIXTURES / "nri-k8s-1.35_kube-apiserver_metrics.prom").read_text()
WANTED = set(FAMILIES[Component.APISERVER]) | {"m"}
APF_HEADER = (
    "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests\n"
)


def _seconds(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


@pytest.fixture(scope="module")
def baseline_s() -> float:
    """Seconds to parse 10 MB of a real apiserver exposition (every line kept)."""
    text = REAL * (SIZE // len(REAL) + 1)
    names = {line.split("{")[0].split(" ")[0] for line in REAL.splitlines() if line[:1] != "#"}
    return _seconds(lambda: parse_exposition(text[:SIZE], names))


def _fill(unit: str, prefix: str = "", suffix: str = "") -> str:
    return prefix + unit * ((SIZE - len(prefix) - len(suffix)) // len(unit)) + suffix


def _lines(make: Callable[[int], str]) -> str:
    """10 MB of lines, each just under the line cap."""
    line = make(MAX_LINE_CHARS - 100)
    return (line + "\n") * (SIZE // (len(line) + 1))


EXPOSITION = {
    "one line of escapes": lambda: _fill("\\\\", 'm{a="', '"} 1\n'),
    "lines of escapes": lambda: _lines(lambda n: 'm{a="' + "\\n" * (n // 2) + '"} 1'),
    "escapes then quotes": lambda: _lines(
        lambda n: 'm{a="' + "\\n" * (n // 4) + '"' + '"' * (n // 4) + "} 1"
    ),
    "a pair padded with blanks": lambda: _lines(lambda n: 'm{a="b"' + " " * n + "x} 1"),
    "blanks before the value": lambda: _lines(lambda n: 'm{a="b"}' + " " * n + "1"),
    "pairs without commas": lambda: _lines(lambda n: "m{" + 'a="b" ' * (n // 6) + "} 1"),
    "one huge label block": lambda: _fill('a="b",', "m{", "} 1\n"),
    "the same series again and again": lambda: _fill('m{a="b"} 1\n'),
    "unterminated values": lambda: _fill('m{a="\\"\\"\\"} 1\n'),
}


@pytest.mark.parametrize("case", list(EXPOSITION))
def test_exposition_is_linear(case: str, baseline_s: float) -> None:
    text = EXPOSITION[case]()
    assert len(text) > SIZE * 0.9
    result = None

    def run() -> None:
        nonlocal result
        result = parse_exposition(text, WANTED)

    assert _seconds(run) < 10 * baseline_s + 2.0
    assert result is not None
    assert len(result.errors) <= MAX_ERRORS + 1


def test_duplicate_series_keep_the_first_and_are_counted() -> None:
    text = 'm{a="b"} 1\nm{a="b"} 5\nm{a="c"} 2\nm{a="b"} 7\n'
    result = parse_exposition(text, {"m"})
    assert [(s.labels, s.value) for s in result.samples] == [
        ((("a", "b"),), 1.0),
        ((("a", "c"),), 2.0),
    ]
    assert result.errors == (
        "line 2: duplicate series m, kept the first",
        "line 4: duplicate series m, kept the first",
    )


def test_overlong_line_and_label_are_reported_not_parsed() -> None:
    long_value = "x" * 20000
    text = f'm{{a="{long_value}"}} 1\nm{{a="{"y" * (MAX_LINE_CHARS + 1)}"}} 2\nm{{a="ok"}} 3\n'
    result = parse_exposition(text, {"m"})
    assert [s.value for s in result.samples] == [3.0]
    assert "longer than 16384" in result.errors[0]
    assert f"longer than {MAX_LINE_CHARS}" in result.errors[1]


def test_errors_are_capped_and_counted() -> None:
    text = "m x\n" * 1000
    result = parse_exposition(text, {"m"})
    assert len(result.errors) == MAX_ERRORS + 1
    assert result.errors[-1] == f"... and {1000 - MAX_ERRORS} more"


APF = {
    "one endless row": lambda: _fill("x,", APF_HEADER),
    "endless rows": lambda: _fill("a, 1, true, false, 0, 0\n", APF_HEADER),
    "no header, one line": lambda: _fill("PriorityLevelName,"),
    "no header, many lines": lambda: _fill("PriorityLevelName, x\n"),
}


@pytest.mark.parametrize("case", list(APF))
def test_apf_dump_is_linear(case: str, baseline_s: float) -> None:
    text = APF[case]()

    def run() -> None:
        try:
            parse_priority_levels(text)
        except ApfDumpError as exc:
            assert len(str(exc)) < 400  # the message never quotes a whole line

    assert _seconds(run) < 10 * baseline_s + 2.0


SCHEDULING = {
    "a 5,000-digit count": lambda: "0/5 nodes are available: " + "9" * 5000 + " node(s) x.",
    "a 5,000-digit total": lambda: "0/" + "9" * 5000 + " nodes are available: 1 x.",
    "10 MB of entries": lambda: _fill("1 node(s) x, ", "0/5 nodes are available: ", "."),
    "10 MB of periods": lambda: _fill(".", "0/5 nodes are available: 1 a"),
    "10 MB of sentences": lambda: _fill("1 a. ", "0/5 nodes are available: "),
    "10 MB of preemption": lambda: _fill(" preemption: ", "0/5 nodes are available: 1 a."),
}


@pytest.mark.parametrize("case", list(SCHEDULING))
def test_failed_scheduling_is_linear_and_never_raises(case: str, baseline_s: float) -> None:
    text = SCHEDULING[case]()
    assert _seconds(lambda: parse_failed_scheduling(text)) < 10 * baseline_s + 2.0


def test_a_count_too_long_to_be_a_count_is_kept_as_text() -> None:
    parsed = parse_failed_scheduling("0/5 nodes are available: " + "9" * 5000 + " node(s) x.")
    assert parsed.total_nodes == 5
    assert all(count == 0 for _, count in parsed.reasons)
    parsed = parse_failed_scheduling("0/" + "9" * 5000 + " nodes are available: 1 x.")
    assert parsed.total_nodes is None


SCRUB = {
    "name characters": "a-" * 500_000,
    "one long word": "a" * 1_000_000,
    "keys without values": "token" * 200_000,
    "keys with blanks": "token " * 170_000,
    "schemes": "http://" * 150_000,
    "JWT starts": "eyJaaaa." * 125_000,
    "JWT starts in one run": "eyJ-" * 250_000,
    "PEM starts": "-----BEGIN " * 90_000,
    "header names": "authorization" * 80_000,
    "quotes": '"' * 1_000_000,
    "separators": "x_token_y-=" * 90_000,
}


@pytest.mark.parametrize("case", list(SCRUB))
def test_scrub_is_linear(case: str, baseline_s: float) -> None:
    from ktop.scrub import Secrets

    secrets = Secrets()
    secrets.add("a-known-secret-value")  # the known values' pattern runs too
    text = SCRUB[case]
    # 1 MB against the 10 MB baseline: a linear scrub is far inside it.
    assert _seconds(lambda: secrets.scrub_opaque(text)) < baseline_s + 2.0
    assert _seconds(lambda: secrets.scrub(text)) < baseline_s + 2.0
