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
