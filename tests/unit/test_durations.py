"""Options in seconds take a unit as ``--max-size`` does (``--duration 2s``, ``1h30m``);
anything else is refused with what the option takes."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ktop import bounds
from ktop.bounds import bounded_float, parse_duration
from ktop.cli import main


@given(st.integers(0, 9), st.integers(0, 59), st.integers(0, 59))
def test_hours_minutes_and_seconds_add_up(h: int, m: int, s: int) -> None:
    assert parse_duration(f"{h}h{m}m{s}s") == h * 3600 + m * 60 + s
    assert parse_duration(f"{s}") == s
    assert parse_duration(f"{m}m") == m * 60


@pytest.mark.parametrize("text", ["2x", "", "s", "1h 3m", "m5", "1..5s", "5sm"])
def test_what_is_not_a_duration_is_refused_with_what_the_option_takes(text: str) -> None:
    assert parse_duration(text) is None
    with pytest.raises(argparse.ArgumentTypeError, match=r"--duration takes"):
        bounded_float(bounds.RECORD_DURATION)(text)


def test_a_duration_out_of_range_is_refused_as_a_number_is() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="out of range"):
        bounded_float(bounds.RECORD_DURATION)("1000h")


def test_options_that_are_not_durations_take_no_unit() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a number"):
        bounded_float(bounds.SPEED)("2s")


def test_record_takes_duration_2s(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    out = f"{tmp_path}/r.ktrec"
    code = main(["record", "--demo", "steady", "--nodes", "20", "--duration", "2s", "--out", out])
    assert code == 0, capsys.readouterr().err
