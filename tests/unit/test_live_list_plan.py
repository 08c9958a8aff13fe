"""The requests a list makes, read as data without a server (``list_plan``), checked
against the query parameters the Kubernetes API documents for each kind of read; the
rows a Table becomes (``rows``); and the live source's modules kept under 500 lines.
The expected queries are written out here, not derived from the plan."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from ktop.sources.live import list_plan
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.handlers import PendingPodsHandler
from ktop.sources.live.listwatch import ListWatch
from ktop.sources.live.node_split import SubList
from ktop.sources.live.reads import NODES, WATCHES, Resource
from ktop.sources.live.rows import Row, as_row, table_rows
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi

NODE_LIST = next(r for r in WATCHES if r.path == NODES)
PENDING = next(r for r in WATCHES if r.whole_first)
PHASE = ("fieldSelector", "status.phase=Pending")
PLACE = ("r1", "a", "", False)
LIVE = Path(__file__).parents[2] / "ktop" / "sources" / "live"


def test_a_resource_is_listed_in_pages_of_its_size_and_watched_from_a_version() -> None:
    quotas = Resource("quotas", "/api/v1/resourcequotas", "resourcequotas")
    assert list_plan.pages(quotas).params() == [("limit", 500)]
    assert list_plan.pages(quotas).params("c1") == [("limit", 500), ("continue", "c1")]
    nodes = list_plan.pages(NODE_LIST)
    assert nodes.table and nodes.params() == [("includeObject", "Metadata"), ("limit", 500)]
    # node watch events are rows alone: their labels come with the list
    assert list_plan.watch_params(NODE_LIST, "77", 300) == [
        ("includeObject", "None"),
        ("resourceVersion", "77"),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", 300),
    ]
    assert list_plan.watch_params(PENDING, "5", 60) == [
        PHASE,
        ("resourceVersion", "5"),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", 60),
    ]


def test_a_long_pending_list_is_whole_objects_first_then_rows_numbered_by_name() -> None:
    whole, rows = list_plan.whole_first(PENDING)
    assert not whole.table and whole.params() == [PHASE, ("limit", 200)]
    assert rows.table and rows.ordinals
    assert rows.params("c2") == [
        PHASE,
        ("includeObject", "None"),
        ("limit", 5000),
        ("continue", "c2"),
    ]


def test_a_zone_list_is_rows_in_larger_pages_and_a_rest_list_has_metadata() -> None:
    zone = list_plan.sub_list(NODE_LIST, SubList("zone=a", PLACE))
    assert zone.place == PLACE
    assert zone.params("c3") == [
        ("labelSelector", "zone=a"),
        ("includeObject", "None"),
        ("limit", 5000),
        ("continue", "c3"),
    ]
    rest = list_plan.sub_list(NODE_LIST, SubList("rack", None))
    assert rest.place is None
    assert rest.params() == [
        ("labelSelector", "rack"),
        ("includeObject", "Metadata"),
        ("limit", 500),
    ]


def test_a_zone_read_whole_from_the_cache_has_no_limit_and_is_not_older_than_the_list() -> None:
    zone = list_plan.from_cache(list_plan.sub_list(NODE_LIST, SubList("zone=a", PLACE)), "42")
    assert zone.place == PLACE
    assert zone.params() == [
        ("labelSelector", "zone=a"),
        ("includeObject", "None"),
        ("resourceVersion", "42"),
        ("resourceVersionMatch", "NotOlderThan"),
    ]


@pytest.mark.parametrize(
    ("rv", "total", "cached"),
    [("42", 100_000, True), ("42", 100_001, False), ("42", None, False), ("", 10, False)],
)
def test_zones_are_read_from_the_cache_only_at_a_version_and_up_to_the_bound(
    rv: str, total: int | None, cached: bool
) -> None:
    assert list_plan.zones_from_cache(rv, total) is cached


async def test_the_list_sends_the_plan_s_requests_in_order() -> None:
    """Three pages: 200 whole pods, then two pages of rows continuing the same list."""

    def route(call: Call) -> Answer:
        cont = call.query.get("continue", "")
        more = {"": "p2", "p2": "p3"}.get(cont, "")
        body: dict[str, Any] = {"metadata": {"resourceVersion": "9", "continue": more}}
        if cont:
            body |= {"columnDefinitions": [{"name": "Name"}], "rows": [{"cells": [f"x{cont}"]}]}
        else:
            body["items"] = []
        return Answer(body=body)

    api = FakeApi(route)
    t = KubeTransport(api, CostMeter())  # type: ignore[arg-type]
    lw = ListWatch(t, PENDING, PendingPodsHandler(), lambda: 1.0, rng=random.Random(1))
    await lw.list_all(lambda events: None)
    sent = [list(c.query.items()) for c in api.calls]
    assert sent == [
        [PHASE, ("limit", "200")],
        [PHASE, ("includeObject", "None"), ("limit", "5000"), ("continue", "p2")],
        [PHASE, ("includeObject", "None"), ("limit", "5000"), ("continue", "p3")],
    ]
    assert lw.keys == {"?/xp2", "?/xp3"} and lw.rv == "9"


def test_table_rows_carry_their_facts_as_fields_not_in_their_json() -> None:
    columns: list[str] = []
    table = {
        "columnDefinitions": [{"name": "Name"}, {"name": "Status"}],
        "rows": [
            {"cells": ["p", "Pending"]},
            {"cells": ["q", "Pending"]},
            {"cells": ["p", "Pending"]},
            {"cells": ["n", "Ready"], "object": {"metadata": {"name": "n", "uid": "u"}}},
            "not a row",
        ],
    }
    names: dict[str, int] = {}
    rows = list(table_rows(table, columns, place=PLACE, names=names))
    assert columns == ["Name", "Status"]
    assert [(r.no_object, r.ordinal, r.place, r.added) for r in rows] == [
        (True, 1, PLACE, False),
        (True, 1, PLACE, False),
        (True, 2, PLACE, False),
        (False, 1, PLACE, False),
        (False, 1, PLACE, False),
    ]
    assert rows[0].item == {"metadata": {"name": "p"}, "cells": {"Name": "p", "Status": "Pending"}}
    assert rows[3].item == {
        "metadata": {"name": "n", "uid": "u"},
        "cells": {"Name": "n", "Status": "Ready"},
    }
    assert rows[4].item == {"metadata": "not a row"}
    assert table["rows"] == [None] * 5  # each row let go as it was made one
    # a watch event's Table has no column definitions: the list's are kept
    (watched,) = table_rows({"rows": [{"cells": ["w", "Ready"]}]}, columns, added=True)
    assert watched == Row(
        {"metadata": {"name": "w"}, "cells": {"Name": "w", "Status": "Ready"}},
        no_object=True,
        added=True,
    )


def test_an_item_that_is_not_an_object_is_unreadable() -> None:
    assert as_row({"metadata": {}}) == Row({"metadata": {}})
    row = Row({"metadata": {}}, added=True)
    assert as_row(row) is row
    with pytest.raises(TypeError, match="an item is list, not an object"):
        as_row([1])


def test_a_row_holds_no_dict_of_its_own() -> None:
    """A zone's rows are made one at a time: each costs a small fixed object."""
    assert not hasattr(Row({}), "__dict__")


@pytest.mark.parametrize("module", sorted(LIVE.glob("*.py")), ids=lambda p: p.name)
def test_live_source_modules_stay_under_500_lines(module: Path) -> None:
    assert len(module.read_text().splitlines()) <= 500
