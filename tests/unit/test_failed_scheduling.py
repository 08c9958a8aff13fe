"""parse_failed_scheduling and reason_key on real and constructed messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ktop.model.failed_scheduling import (
    SchedulingFailure,
    parse_failed_scheduling,
    reason_key,
)

FIXTURES = Path(__file__).parent.parent / "fixtures"

MASTER_TAINT_1_18 = (
    "node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate"
)
RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
PREEMPTION_NOT_HELPFUL_1 = "0/1 nodes are available: 1 Preemption is not helpful for scheduling."


def _pod_scheduled_message(pod: dict[str, Any]) -> str:
    (condition,) = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert condition["status"] == "False"
    assert condition["reason"] == "Unschedulable"
    message: str = condition["message"]
    return message


def test_reference_message_with_preemption_victims() -> None:
    message = (
        "0/6 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "4 Insufficient nvidia.com/gpu. preemption: 0/6 nodes are available: "
        "2 Preemption is not helpful for scheduling, 4 No preemption victims found for "
        "incoming pod."
    )
    assert parse_failed_scheduling(message) == SchedulingFailure(
        total_nodes=6,
        reasons=(
            ("node(s) didn't match Pod's node affinity/selector", 1),
            ("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }", 1),
            ("Insufficient nvidia.com/gpu", 4),
        ),
        prefilter="",
        preemption=(
            "0/6 nodes are available: 2 Preemption is not helpful for scheduling, "
            "4 No preemption victims found for incoming pod."
        ),
        truncated=False,
        raw=message,
    )


def test_renamed_volume_reason_pr_129887() -> None:
    message = (
        "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    parsed = parse_failed_scheduling(message)
    assert parsed.reasons == (("node(s) didn't match PersistentVolume's node affinity", 1),)
    assert parsed.preemption == PREEMPTION_NOT_HELPFUL_1


def test_doubled_period_of_1_26_issue_116133() -> None:
    message = (
        "0/1 nodes are available: 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling.."
    )
    parsed = parse_failed_scheduling(message)
    assert parsed.total_nodes == 1
    assert parsed.reasons == (
        ("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }", 1),
    )
    assert parsed.preemption == PREEMPTION_NOT_HELPFUL_1
    assert not parsed.truncated


def test_old_taint_form_with_preemption_pr_107775() -> None:
    message = (
        "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had taint "
        "{virtual-kubelet.io/provider: ***}, that the pod didn't tolerate, 2 node(s) didn't "
        "match Pod's node affinity/selector. preemption: not eligible due to "
        "preemptionPolicy=Never."
    )
    parsed = parse_failed_scheduling(message)
    assert parsed.reasons == (
        ("Insufficient cpu", 1),
        ("node(s) had taint {virtual-kubelet.io/provider: ***}, that the pod didn't tolerate", 1),
        ("node(s) didn't match Pod's node affinity/selector", 2),
    )
    assert parsed.preemption == "not eligible due to preemptionPolicy=Never."


def test_dra_post_filter_text_from_reference() -> None:
    message = (
        "0/10 nodes are available: 10 node(s) had untolerated taint(s). no new claims to "
        "deallocate, preemption: 0/10 nodes are available: 10 Preemption is not helpful "
        "for scheduling."
    )
    parsed = parse_failed_scheduling(message)
    assert parsed.total_nodes == 10
    assert parsed.reasons == (("node(s) had untolerated taint(s)", 10),)
    assert parsed.post_filter == "no new claims to deallocate"
    assert parsed.preemption == (
        "0/10 nodes are available: 10 Preemption is not helpful for scheduling."
    )


def test_real_pod_1_35_fixture() -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    pods = yaml.load((FIXTURES / "nri-k8s-1.35_pods.yaml").read_text(encoding="utf-8"), loader)
    pending = [p for p in pods["items"] if p["status"]["phase"] == "Pending"]
    messages = [_pod_scheduled_message(p) for p in pending]
    assert len(messages) == 1
    parsed = parse_failed_scheduling(messages[0])
    assert parsed.total_nodes == 1
    assert parsed.reasons == (("node(s) didn't match Pod's node affinity/selector", 1),)
    assert parsed.post_filter == "no new claims to deallocate"
    assert parsed.preemption == PREEMPTION_NOT_HELPFUL_1
    assert parsed.prefilter == ""
    assert not parsed.truncated


def test_real_openshift_pending_pod_old_taint_form() -> None:
    pod = json.loads(
        (FIXTURES / "openshift-insights_pending-pod_router-default.json").read_text("utf-8")
    )
    message = _pod_scheduled_message(pod)
    parsed = parse_failed_scheduling(message)
    assert parsed == SchedulingFailure(
        total_nodes=2,
        reasons=(
            ("node(s) didn't have free ports for the requested pod ports", 1),
            (MASTER_TAINT_1_18, 1),
        ),
        prefilter="",
        preemption="",
        truncated=False,
        raw=message,
    )
    assert [reason_key(r) for r, _ in parsed.reasons] == [
        "didn't have free ports for the requested pod ports",
        "untolerated taint {node-role.kubernetes.io/master: }",
    ]


def test_taints_form_before_1_18() -> None:
    message = "0/3 nodes are available: 3 node(s) had taints that the pod didn't tolerate."
    parsed = parse_failed_scheduling(message)
    assert parsed.reasons == (("node(s) had taints that the pod didn't tolerate", 3),)
    assert parsed.preemption == ""


@pytest.mark.parametrize(
    ("message", "prefilter", "preemption"),
    [
        (
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            "pod has unbound immediate PersistentVolumeClaims",
            "0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
        ),
        (
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            "pod has unbound immediate PersistentVolumeClaims",
            "",
        ),
    ],
)
def test_prefilter_message_has_no_histogram(message: str, prefilter: str, preemption: str) -> None:
    parsed = parse_failed_scheduling(message)
    assert parsed.total_nodes == 3
    assert parsed.reasons == ()
    assert parsed.prefilter == prefilter
    assert parsed.preemption == preemption


def _truncate(message: str, limit: int = 1024) -> str:
    """What the scheduler does to the Event copy (truncateMessage)."""
    return message if len(message) <= limit else message[: limit - 4] + " ..."


def test_truncated_event_text() -> None:
    entries = [f"1 Insufficient example.com/resource-{i:03d}" for i in range(60)]
    full = (
        f"0/60 nodes are available: {', '.join(entries)}. "
        "preemption: 0/60 nodes are available: 60 Preemption is not helpful for scheduling."
    )
    cut = _truncate(full)
    assert cut.endswith(" ...")
    parsed = parse_failed_scheduling(cut)
    whole = parse_failed_scheduling(full)
    assert not whole.truncated
    assert len(whole.reasons) == 60
    assert parsed.truncated
    assert parsed.total_nodes == 60
    assert parsed.preemption == ""
    assert 0 < len(parsed.reasons) < 60
    assert parsed.reasons[:-1] == whole.reasons[: len(parsed.reasons) - 1]
    last_reason, last_count = parsed.reasons[-1]
    assert last_count == 1
    assert whole.reasons[len(parsed.reasons) - 1][0].startswith(last_reason)


def test_truncated_inside_preemption_part() -> None:
    message = (
        "0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are "
        "available: 2 No preemption vic ..."
    )
    parsed = parse_failed_scheduling(message)
    assert parsed.truncated
    assert parsed.reasons == (("Insufficient memory", 2),)
    assert parsed.preemption == "0/2 nodes are available: 2 No preemption vic"


@pytest.mark.parametrize(
    "message",
    [
        "Scheduling is blocked due to non-empty scheduling gates",
        'running PreBind plugin "VolumeBinding": binding volumes: timed out waiting',
        "no nodes available to schedule pods",
    ],
)
def test_other_text_becomes_a_single_reason(message: str) -> None:
    parsed = parse_failed_scheduling(message)
    assert parsed.total_nodes is None
    assert parsed.reasons == ((message, 0),)
    assert parsed.raw == message


@pytest.mark.parametrize(
    "message",
    [
        "",
        " ...",
        "0/",
        "0/x nodes are available: 1 a",
        "0/5 nodes are available:",
        "0/5 nodes are available: .",
        "0/5 nodes are available: 5 ",
        "0/5 nodes are available: preemption: ",
        "0/5 nodes are available: 1 a, 2 b, , 3 c. , preemption: x, preemption: y",
        "0/5 nodes are available: 99999999999999999999 big.",
        "\x00\n\r{}: ..",
    ],
)
def test_never_raises(message: str) -> None:
    parsed = parse_failed_scheduling(message)
    assert parsed.raw == message
    assert all(count >= 0 for _, count in parsed.reasons)


@pytest.mark.parametrize(
    ("reason", "key"),
    [
        # the same taint across versions
        (
            "node(s) had taint {dedicated: gpu}, that the pod didn't tolerate",
            "untolerated taint {dedicated: gpu}",
        ),
        ("node(s) had untolerated taint {dedicated: gpu}", "untolerated taint {dedicated: gpu}"),
        (
            "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }",
            "untolerated taint {node-role.kubernetes.io/control-plane: }",
        ),
        ("node(s) had untolerated taint(s)", "untolerated taint(s)"),
        ("node(s) had taints that the pod didn't tolerate", "untolerated taint(s)"),
        # the rename of PR #129887
        (
            "node(s) had volume node affinity conflict",
            "didn't match PersistentVolume's node affinity",
        ),
        (
            "node(s) didn't match PersistentVolume's node affinity",
            "didn't match PersistentVolume's node affinity",
        ),
        (
            "node(s) didn't match Pod's node affinity/selector",
            "didn't match Pod's node affinity/selector",
        ),
        (
            "node(s) didn't satisfy plugin(s) [NodeAffinity]",
            "didn't satisfy plugin(s) [NodeAffinity]",
        ),
        ("Insufficient nvidia.com/gpu", "Insufficient nvidia.com/gpu"),
        ("Too many pods", "Too many pods"),
        (RWOP_CONFLICT, RWOP_CONFLICT),
    ],
)
def test_reason_key(reason: str, key: str) -> None:
    assert reason_key(reason) == key
