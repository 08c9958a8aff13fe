"""The etcd pane says which view it shows: members, the apiservers' view, or both."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ktop.model.events import Area, Component
from ktop.model.snapshot import ClusterSnapshot
from ktop.model.snapshot_etcd import EtcdView
from ktop.model.text import fmt_bytes
from ktop.ui.app import KtopApp
from ktop.ui.screens.drill import DrillScreen
from ktop.ui.screens.overview import OverviewScreen
from tests.functional.factories import StaticHub, busy_snapshot
from tests.unit.test_model_fixtures import _model

SIZES = [(80, 24), (160, 48)]


def apiserver_only_snapshot() -> ClusterSnapshot:
    """A real 1.35 apiserver scrape and no etcd member: the managed-cluster case."""
    real = _model(Component.APISERVER, "nri-k8s-1.35_kube-apiserver_metrics.prom").snapshot()
    return replace(busy_snapshot(), etcd=real.etcd)


@pytest.mark.parametrize("size", SIZES)
async def test_apiserver_view_when_members_are_unreadable(size: tuple[int, int]) -> None:
    snap = apiserver_only_snapshot()
    assert snap.etcd.view is EtcdView.APISERVER
    view = snap.etcd.apiserver_view
    assert view is not None
    app = KtopApp(StaticHub(snap, ()))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OverviewScreen)
        text = screen.panel(Area.ETCD).plain
        assert "apiserver view" in text and "leader ?" in text
        assert fmt_bytes(view.storage_bytes.value or 0) in text
        await pilot.press("3")
        await pilot.pause()
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        assert drill.table("etcd-clients").row_count == len(view.instances) == 1
        assert drill.table("etcd-objects").row_count == len(view.objects) > 10


async def test_view_appearing_while_the_drill_down_is_open() -> None:
    """Live, the apiservers' metrics arrive after the screen opened: same tables, filled."""
    members_only = busy_snapshot()
    hub = StaticHub(members_only, ())
    app = KtopApp(hub)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        drill = app.screen
        assert isinstance(drill, DrillScreen)
        assert drill.table("etcd-clients").row_count == 0
        hub.set(apiserver_only_snapshot(), ())
        for _ in range(100):  # until the app's next refresh shows it (1 s interval)
            if drill.table("etcd-clients").row_count:
                break
            await pilot.pause(0.05)
        assert drill.table("etcd-clients").row_count == 1


async def test_both_views_side_by_side() -> None:
    snap = busy_snapshot()
    client = apiserver_only_snapshot().etcd.apiserver_view
    both = replace(snap, etcd=replace(snap.etcd, apiserver_view=client))
    assert both.etcd.view is EtcdView.BOTH
    app = KtopApp(StaticHub(both, ()))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, OverviewScreen)
        text = app.screen.panel(Area.ETCD).plain
        assert "leader etcd-0" in text and "apiserver view: p99" in text
