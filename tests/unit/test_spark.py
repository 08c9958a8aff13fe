"""Sparklines tell the truth: zero-based, topped by the reading's warning limit, coloured
by each value's own status (theme styles only), and a constant non-zero value is a full
bar. Expected heights are computed here from the limits, not read from the renderer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ktop.model.signals import BY_METRIC
from ktop.ui.render.level import STYLE, Level
from ktop.ui.render.spark import BARS, spark_lines

FSYNC = "etcd.fsync_p99_s"
WARN = BY_METRIC[FSYNC].threshold.warn  # type: ignore[union-attr]
CRIT = BY_METRIC[FSYNC].threshold.critical  # type: ignore[union-attr]


def _styles(line: object) -> set[str]:
    return {str(span.style) for span in line.spans}  # type: ignore[attr-defined]


def test_a_healthy_fsync_far_below_its_limit_stays_at_the_bottom_in_ok() -> None:
    assert WARN is not None and WARN >= 0.1
    (line,) = spark_lines(FSYNC, [0.0020, 0.0021, 0.0022, 0.0020])
    assert line.plain == BARS[0] * 4  # 2 ms of a 0-to-warning scale is the lowest bar
    assert _styles(line) == {STYLE[Level.OK]}


def test_a_constant_count_is_a_full_bar_not_a_bottom_line() -> None:
    (line,) = spark_lines("nodes.not_ready", [1667.0] * 10)
    assert line.plain == BARS[-1] * 10


def test_a_small_change_is_a_small_change() -> None:
    (line,) = spark_lines("api.requests_per_s", [914.0, 910.0, 906.0, 902.0])
    heights = [BARS.index(c) for c in line.plain]
    assert max(heights) - min(heights) <= 1  # 902 is 98.7% of 914 on a zero-based scale


def test_each_column_is_coloured_by_its_own_status() -> None:
    assert WARN is not None and CRIT is not None
    (line,) = spark_lines(FSYNC, [WARN / 10, WARN * 1.1, CRIT * 1.5])
    styles = {span.start: str(span.style) for span in line.spans}
    assert [styles[i] for i in range(3)] == [
        STYLE[Level.OK],
        STYLE[Level.WARN],
        STYLE[Level.CRIT],
    ]


def test_a_reading_without_a_threshold_has_no_status_colour() -> None:
    (line,) = spark_lines("etcd.db_size_bytes", [1.0, 2.0, 3.0])
    assert _styles(line) <= {""}


@given(
    st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60),
    st.integers(1, 3),
)
def test_every_column_is_drawn_and_only_theme_styles_are_used(
    values: list[float], height: int
) -> None:
    lines = spark_lines("apf.in_queue", values, height)
    assert len(lines) == height
    assert all(len(line.plain) == len(values) for line in lines)
    assert all(c != " " for c in lines[-1].plain)  # the bottom row always shows the value
    for line in lines:
        assert _styles(line) <= {*STYLE.values()}
