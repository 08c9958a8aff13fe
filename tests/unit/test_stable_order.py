"""Rows order by what the screen prints: jitter below the printed precision never swaps
two APF rows (ties go by name), and the worst rows come first in every APF table and in
the overview panel, the per-instance table included."""

from __future__ import annotations

from ktop.model.snapshot import ApfRow, ApfSnapshot
from ktop.ui.render.apf import panel, shown_order, tables
from tests.functional.factories import apf_row


def _names(rows: list[ApfRow]) -> list[str]:
    return [r.priority_level for r in rows]


def test_jitter_the_screen_does_not_show_never_swaps_rows() -> None:
    # 3.27 s and 3.31 s both print as 3.3s; 4 and 4 queued: a tie, broken by name
    first = [apf_row("b-level", in_queue=4, p99=3.31), apf_row("a-level", in_queue=4, p99=3.27)]
    second = [apf_row("b-level", in_queue=4, p99=3.26), apf_row("a-level", in_queue=4, p99=3.32)]
    assert _names(shown_order(first)) == _names(shown_order(second)) == ["a-level", "b-level"]


def test_a_printed_difference_orders_worst_first() -> None:
    rows = [
        apf_row("quiet", p99=0.001),
        apf_row("queued", in_queue=12, p99=2.0),
        apf_row("rejecting", in_queue=3, p99=0.5, rejected={"queue-full": 4.0}),
    ]
    assert _names(shown_order(rows)) == ["rejecting", "queued", "quiet"]


def test_the_saturated_level_leads_the_per_instance_table_and_the_panel() -> None:
    calm = [apf_row(f"level-{i:02d}", instance=f"api-{j}") for i in range(8) for j in range(3)]
    hot = [
        apf_row("workload-low", instance=f"api-{j}", in_queue=40, rejected={"time-out": 2.0})
        for j in range(3)
    ]
    levels = [apf_row(f"level-{i:02d}") for i in range(8)]
    levels.append(apf_row("workload-low", in_queue=120, rejected={"time-out": 6.0}))
    apf = ApfSnapshot(tuple(levels), (), tuple(calm + hot))
    per_instance = next(t for t in tables(apf) if t.key == "instances")
    assert [r.key.split("/")[1] for r in per_instance.rows[:3]] == ["workload-low"] * 3
    view = panel(apf, None, rows=4, width=80)
    body = [line.plain for line in view.lines]
    header = next(i for i, line in enumerate(body) if "inq" in line)
    assert body[header + 1].split()[0] == "workload-low", body
