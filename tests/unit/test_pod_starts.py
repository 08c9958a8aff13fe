"""Pod start Warnings folded by the model: grouped by cause, node and zone (triage P3)."""

from __future__ import annotations

from ktop.model import events as ev
from ktop.model.cluster import ClusterModel
from ktop.model.pod_starts import IMAGE_PULL, SANDBOX, VOLUME, start_category


def test_categories() -> None:
    assert start_category("FailedCreatePodSandBox", "x") == SANDBOX
    assert start_category("FailedMount", "x") == VOLUME
    assert start_category("FailedAttachVolume", "x") == VOLUME
    assert start_category("Failed", 'Failed to pull image "x": not found') == IMAGE_PULL
    assert start_category("BackOff", 'Back-off pulling image "x"') == IMAGE_PULL
    assert start_category("BackOff", "Back-off restarting failed container") is None
    assert start_category("FailedScheduling", "0/3 nodes") is None


def _node(name: str, zone: str) -> ev.NodeRecord:
    return ev.NodeRecord(name, "r", zone, "", ev.Readiness.TRUE, None)


def _pod(name: str, node: str) -> ev.PendingPodRecord:
    return ev.PendingPodRecord("ns", name, 0.0, ev.PodWait.BOUND_NOT_STARTED, node=node)


def test_model_groups_bound_pods_by_latest_warning() -> None:
    m = ClusterModel()
    m.apply_all(
        [
            ev.FeedSynced(1, ev.FEED_EVENTS),
            ev.NodeUpserted(1, _node("n1", "z1")),
            ev.NodeUpserted(1, _node("n2", "z2")),
            ev.PendingPodUpserted(2, _pod("a", "n1")),
            ev.PendingPodUpserted(2, _pod("b", "n1")),
            ev.PendingPodUpserted(2, _pod("c", "n2")),
            ev.WarningEvent(3, "FailedMount", "ns", "Pod", "a", "MountVolume.SetUp failed"),
            # the latest Warning wins: b was a mount problem, now a sandbox problem
            ev.WarningEvent(3, "FailedMount", "ns", "Pod", "b", "MountVolume.SetUp failed"),
            ev.WarningEvent(4, "FailedCreatePodSandBox", "ns", "Pod", "b", "cni: no IP"),
            ev.WarningEvent(4, "FailedCreatePodSandBox", "ns", "Pod", "c", "cni: no IP"),
            # a Warning about a pod that is not bound-but-not-started is ignored
            ev.WarningEvent(4, "FailedMount", "ns", "Pod", "zzz", "x"),
        ]
    )
    s = m.snapshot().scheduler
    assert s.events_known
    got = {(f.category, f.reason): (f.pods, f.nodes, f.zones) for f in s.start_failures}
    assert got == {
        (SANDBOX, "FailedCreatePodSandBox"): (2, (("n1", 1), ("n2", 1)), (("z1", 1), ("z2", 1))),
        (VOLUME, "FailedMount"): (1, (("n1", 1),), (("z1", 1),)),
    }
