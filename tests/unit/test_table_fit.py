"""Panel tables use the width: no name is cut while the other columns have room to give."""

from __future__ import annotations

from ktop.ui.render.level import Level
from ktop.ui.render.view import TableCell, line, table_lines

HEAD = [TableCell("instance", 0, "left"), TableCell("req", 7), TableCell("infl", 5)]
HEAD += [TableCell("watch", 6), TableCell("up", 5)]


def row(name: str, level: Level = Level.NEUTRAL, *values: str) -> list[TableCell]:
    req, infl, watch, up = values or ("85/s", "42", "1.7k", "2d")
    return [
        TableCell(name, 0, "left", level),
        TableCell(req, 7),
        TableCell(infl, 5),
        TableCell(watch, 6),
        TableCell(up, 5),
    ]


def test_a_marked_name_is_whole_when_the_numbers_leave_room() -> None:
    # 38 columns inside a panel at 80x24: the declared widths leave 10 for the name,
    # "▲apiserver-0" needs 12, and the numbers use far less than their columns.
    rows = [HEAD, row("apiserver-0", Level.WARN), row("apiserver-1")]
    out = [t.plain for t in table_lines(rows, 38)]
    assert "▲apiserver-0" in out[1]
    assert out[2].startswith("apiserver-1")
    for text in ("85/s", "42", "1.7k", "2d"):
        assert text in out[1]
    assert all(len(t) <= 38 for t in out)
    # the declared widths alone cut it (or this test is void)
    assert "▲apiserver-0" not in line(rows[1], 38).plain


def test_columns_keep_their_places_while_every_name_fits() -> None:
    rows = [HEAD, row("a-0"), row("a-1", Level.CRIT, "1.2k/s", "300", "12.5k", "400d")]
    fitted = [t.plain for t in table_lines(rows, 60)]
    assert fitted == [line(r, 60).plain for r in rows]


def test_every_line_of_a_table_keeps_the_same_column_edges() -> None:
    rows = [HEAD, row("kube-apiserver-ip-10-0-0-1", Level.WARN), row("b", Level.NEUTRAL)]
    out = [t.plain for t in table_lines(rows, 40)]
    ends = [len(t) for t in out]
    assert len(set(ends)) == 1, out  # the right-aligned last column ends in one place


def test_a_name_longer_than_all_the_room_is_cut_keeping_its_end() -> None:
    name = "kube-apiserver-" + "x" * 40 + "-7"
    out = table_lines([HEAD, row(name, Level.WARN)], 38)[1].plain
    assert len(out) <= 38
    assert "…" in out and "-7" in out
