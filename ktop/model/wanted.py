"""The metric families ktop reads, per component, and the labels it keeps.

Everything else in an exposition is skipped before parsing. For each family
the value is the tuple of labels kept; series that differ only in other
labels are summed when they are ingested (this keeps the number of series
ktop holds small: ``apiserver_request_total`` has thousands of series on a
busy apiserver but only a few dozen distinct ``(verb, code, subresource)``; the
subresource tells the scheduler's bindings apart). For
histograms, ``le`` is always kept. ``None`` keeps every label.
"""

from __future__ import annotations

from collections.abc import Mapping

from ktop.model.events import Component

KeptLabels = tuple[str, ...] | None

APF_FAMILIES: Mapping[str, KeptLabels] = {
    "apiserver_flowcontrol_current_inqueue_requests": ("priority_level", "flow_schema"),
    "apiserver_flowcontrol_current_executing_requests": ("priority_level", "flow_schema"),
    "apiserver_flowcontrol_current_executing_seats": ("priority_level", "flow_schema"),
    "apiserver_flowcontrol_nominal_limit_seats": ("priority_level",),
    "apiserver_flowcontrol_current_limit_seats": ("priority_level",),
    "apiserver_flowcontrol_request_wait_duration_seconds": (
        "priority_level",
        "flow_schema",
        "execute",
    ),
    "apiserver_flowcontrol_rejected_requests_total": ("priority_level", "flow_schema", "reason"),
    "apiserver_flowcontrol_dispatched_requests_total": ("priority_level", "flow_schema"),
}

APISERVER_FAMILIES: Mapping[str, KeptLabels] = {
    **APF_FAMILIES,
    "apiserver_request_total": ("verb", "code", "subresource"),
    "apiserver_current_inflight_requests": ("request_kind",),
    "apiserver_longrunning_requests": ("verb",),
    "apiserver_resource_size_estimate_bytes": ("group", "resource"),
    "apiserver_resource_objects": ("group", "resource"),
    "apiserver_request_terminations_total": ("code",),
    "apiserver_request_duration_seconds": ("verb", "scope"),
    # the API call latency SLIs (ktop/model/slo.py): without APF waits and webhooks
    "apiserver_request_sli_duration_seconds": ("verb", "scope"),
    "apiserver_request_slo_duration_seconds": ("verb", "scope"),
    "process_cpu_seconds_total": (),
    "process_resident_memory_bytes": (),
    "process_start_time_seconds": (),
    "kubernetes_build_info": ("git_version",),
    # etcd as the apiserver sees it (labels before 1.34: operation, type).
    "etcd_request_duration_seconds": ("operation", "group", "resource", "type"),
    "etcd_requests_total": ("operation", "group", "resource", "type"),
    "etcd_request_errors_total": ("operation", "group", "resource", "type"),
    "apiserver_storage_size_bytes": (),
    "apiserver_storage_db_total_size_in_bytes": ("endpoint",),
    "etcd_db_total_size_in_bytes": ("endpoint",),
    "apiserver_storage_objects": ("resource",),
}

ETCD_FAMILIES: Mapping[str, KeptLabels] = {
    "etcd_server_has_leader": (),
    "etcd_server_is_leader": (),
    "etcd_server_leader_changes_seen_total": (),
    "etcd_disk_wal_fsync_duration_seconds": (),
    "etcd_disk_backend_commit_duration_seconds": (),
    "etcd_disk_defrag_inflight": (),
    "etcd_debugging_server_alarms": ("alarm_type",),
    "etcd_server_proposals_pending": (),
    "etcd_server_proposals_failed_total": (),
    "etcd_server_slow_apply_total": (),
    "etcd_mvcc_db_total_size_in_bytes": (),
    "etcd_mvcc_db_total_size_in_use_in_bytes": (),
    "etcd_debugging_mvcc_db_total_size_in_bytes": (),
    "etcd_server_quota_backend_bytes": (),
    "etcd_network_peer_round_trip_time_seconds": ("To",),
    "etcd_server_version": ("server_version",),
    "process_start_time_seconds": (),
}

SCHEDULER_FAMILIES: Mapping[str, KeptLabels] = {
    "scheduler_pending_pods": ("queue",),
    "scheduler_schedule_attempts_total": ("result",),
    "scheduler_unschedulable_pods": ("plugin",),
    "scheduler_scheduling_attempt_duration_seconds": ("result",),
    "leader_election_master_status": ("name",),
    "process_start_time_seconds": (),
}

CONTROLLER_MANAGER_FAMILIES: Mapping[str, KeptLabels] = {
    "node_collector_zone_health": ("zone",),
    "node_collector_zone_size": ("zone",),
    "node_collector_unhealthy_nodes_in_zone": ("zone",),
    "node_collector_evictions_total": ("zone",),
    "leader_election_master_status": ("name",),
    "process_start_time_seconds": (),
}

FAMILIES: Mapping[Component, Mapping[str, KeptLabels]] = {
    Component.APISERVER: APISERVER_FAMILIES,
    Component.ETCD: ETCD_FAMILIES,
    Component.SCHEDULER: SCHEDULER_FAMILIES,
    Component.CONTROLLER_MANAGER: CONTROLLER_MANAGER_FAMILIES,
}
"""Families read from each component's ``/metrics``."""

HISTOGRAMS = frozenset(
    {
        "apiserver_flowcontrol_request_wait_duration_seconds",
        "apiserver_request_duration_seconds",
        "apiserver_request_sli_duration_seconds",
        "apiserver_request_slo_duration_seconds",
        "etcd_request_duration_seconds",
        "etcd_disk_wal_fsync_duration_seconds",
        "etcd_disk_backend_commit_duration_seconds",
        "etcd_network_peer_round_trip_time_seconds",
        "scheduler_scheduling_attempt_duration_seconds",
    }
)
"""Families that are histograms (their samples are ``_bucket``, ``_sum``, ``_count``)."""

COUNTER_SUFFIX = "_total"
"""How a counter family's name ends: Prometheus' naming rule (OpenMetrics requires it, and
every counter of the control plane follows it), so the name declares the kind."""

COUNTERS = frozenset(
    family
    for families in FAMILIES.values()
    for family in families
    if family.endswith(COUNTER_SUFFIX)
)
"""Families that are counters, from their names (everything else not a histogram is a
gauge): a family added to :data:`FAMILIES` for a rate is known as a counter, so its resets
are handled, with no second table to keep."""
