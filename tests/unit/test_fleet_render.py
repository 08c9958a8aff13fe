"""The fleet table's layout: it fits 80 columns and keeps cell names apart."""

from __future__ import annotations

import pytest

from ktop.analysis.fleet import unreachable
from ktop.fleet import FleetView
from ktop.ui.render.fleet import WIDE, fleet_table, middle

PADDING = 2
"""A DataTable pads every column by one cell on each side."""


def test_names_are_cut_in_the_middle_so_cells_stay_apart() -> None:
    a, b = "prod-us-east-1-cell-a", "prod-us-east-1-cell-b"
    assert middle(a, 12) != middle(b, 12)
    assert len(middle(a, 12)) == 12
    assert middle(a, 12).startswith("prod-") and middle(a, 12).endswith("cell-a")
    assert middle("steady", 12) == "steady"


@pytest.mark.parametrize("width", [80, WIDE])
def test_fixed_columns_fit(width: int) -> None:
    view = FleetView((unreachable("prod-us-east-1-cell-a", "connection refused"),))
    spec = fleet_table(view, width)
    fixed = [c.width for c in spec.columns if c.width is not None]
    assert sum(fixed) + PADDING * len(spec.columns) <= width
    if width < WIDE:
        assert all(c.width is not None for c in spec.columns)
        assert len(spec.rows[0].cells[0].plain) <= spec.columns[0].width  # type: ignore[operator]


@pytest.mark.parametrize("width", [80, 120, 200])
def test_no_name_is_cut_while_the_table_has_room(width: int) -> None:
    names = ("prod-us-east-1-cell-a", "prod-eu-west-2-cell-long-name-b", "c")
    view = FleetView(tuple(unreachable(n, "connection refused") for n in names))
    spec = fleet_table(view, width)
    fixed = [c.width or 20 for c in spec.columns]  # "why" keeps at least 20 when wide
    room = width - sum(fixed) - PADDING * len(spec.columns)
    shown = [r.cells[0].plain[2:] for r in spec.rows]  # after the status mark
    if room >= 0 and spec.columns[0].width == max(len(n) for n in names) + 2:
        assert shown == list(names)  # whole, and the table still fits
    else:  # a narrow terminal: cut in the middle, every column still fits
        assert room >= 0 and all(len(s) <= spec.columns[0].width - 2 for s in shown)  # type: ignore[operator]
    if width >= 120:
        assert shown == list(names)
