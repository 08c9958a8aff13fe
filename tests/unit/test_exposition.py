"""parse_exposition against prometheus_client on real scrapes, and edge cases."""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ktop.model.events import Sample
from ktop.model.exposition import accepted_names, parse_exposition
from ktop.model.zones import zone_key

FIXTURES = Path(__file__).parent.parent / "fixtures"

Key = tuple[str, tuple[tuple[str, str], ...], float | str]


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _value_key(value: float) -> float | str:
    return "NaN" if math.isnan(value) else float(value)


def _declared(text: str) -> dict[str, str]:
    """Family name -> type, from the ``# TYPE`` lines."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            out[name] = kind.strip()
    return out


def _reference(text: str, wanted: set[str]) -> Counter[Key]:
    """The wanted families' samples as prometheus_client reads them.

    prometheus_client names a counter family without ``_total``, and renames
    the samples of a counter declared without ``_total`` (e.g.
    ``authentication_attempts``) to ``<name>_total``: both are undone here.
    """
    types = _declared(text)
    out: Counter[Key] = Counter()
    for family in text_string_to_metric_families(text):
        declared = family.name
        if family.type == "counter" and types.get(family.name + "_total") == "counter":
            # Both ``go_memstats_alloc_bytes`` (gauge) and ``go_memstats_alloc_bytes_total``
            # (counter) exist: prometheus_client names both families the same.
            declared = family.name + "_total"
        if declared not in wanted:
            continue
        for s in family.samples:
            name = s.name
            if family.type == "counter" and not declared.endswith("_total"):
                name = name.removesuffix("_total")
            out[(name, tuple(sorted(s.labels.items())), _value_key(s.value))] += 1
    return out


def _names(text: str) -> set[str]:
    return set(text.split())


def _ours(samples: tuple[Sample, ...]) -> Counter[Key]:
    return Counter((s.name, s.labels, _value_key(s.value)) for s in samples)


# Besides what ktop reads: a summary (go_gc_duration_seconds), a counter declared
# without _total (authentication_attempts), a gauge ending in _count, a family whose
# value is +Inf (rest_client_exec_plugin_ttl_seconds), and two absent families
# (apiserver_flowcontrol_rejected_requests_total: nothing was rejected; no_such_family).
APISERVER_WANTED = _names(
    """
    apiserver_flowcontrol_current_inqueue_requests apiserver_flowcontrol_current_executing_requests
    apiserver_flowcontrol_current_executing_seats apiserver_flowcontrol_nominal_limit_seats
    apiserver_flowcontrol_current_limit_seats apiserver_flowcontrol_request_wait_duration_seconds
    apiserver_flowcontrol_rejected_requests_total apiserver_flowcontrol_dispatched_requests_total
    apiserver_flowcontrol_request_execution_seconds apiserver_flowcontrol_current_inqueue_seats
    apiserver_flowcontrol_demand_seats apiserver_flowcontrol_seat_fair_frac
    apiserver_request_total apiserver_current_inflight_requests apiserver_longrunning_requests
    apiserver_request_terminations_total apiserver_request_duration_seconds
    apiserver_storage_objects etcd_request_duration_seconds process_cpu_seconds_total
    process_resident_memory_bytes process_start_time_seconds kubernetes_build_info
    go_gc_duration_seconds authentication_attempts authentication_token_cache_active_fetch_count
    rest_client_exec_plugin_ttl_seconds apiserver_watch_events_total no_such_family
    apiserver_admission_step_admission_duration_seconds_summary
    """
)
# etcd_debugging_lease_ttl_total is a histogram whose name ends in _total;
# etcd_server_health_failures a counter declared without _total.
ETCD_WANTED = _names(
    """
    etcd_server_has_leader etcd_server_is_leader etcd_server_leader_changes_seen_total
    etcd_disk_wal_fsync_duration_seconds etcd_disk_backend_commit_duration_seconds
    etcd_server_proposals_pending etcd_server_proposals_failed_total
    etcd_mvcc_db_total_size_in_bytes etcd_mvcc_db_total_size_in_use_in_bytes
    etcd_debugging_mvcc_db_total_size_in_bytes etcd_server_quota_backend_bytes
    etcd_network_peer_round_trip_time_seconds etcd_server_version
    etcd_server_health_failures etcd_debugging_lease_ttl_total
    """
)
SCHEDULER_WANTED = _names(
    """
    scheduler_pending_pods scheduler_schedule_attempts_total scheduler_unschedulable_pods
    scheduler_scheduling_attempt_duration_seconds process_start_time_seconds
    """
)
CONTROLLER_MANAGER_WANTED = _names(
    """
    node_collector_zone_health node_collector_zone_size node_collector_unhealthy_nodes_in_zone
    node_collector_evictions_total process_start_time_seconds
    """
)


@pytest.mark.parametrize(
    ("fixture", "wanted", "expected_families"),
    [
        ("nri-k8s-1.35_kube-apiserver_metrics.prom", APISERVER_WANTED, 28),
        # etcd 3.6 no longer has etcd_debugging_mvcc_db_total_size_in_bytes, and a
        # single member has no etcd_network_peer_round_trip_time_seconds.
        ("nri-k8s-1.35_etcd_metrics.prom", ETCD_WANTED, 13),
        ("qubership_etcd-3.4.3_follower_metrics.prom", ETCD_WANTED, 15),
        ("nri-k8s-1.35_kube-scheduler_metrics.prom", SCHEDULER_WANTED, 5),
        ("nri-k8s-1.35_kube-controller-manager_metrics.prom", CONTROLLER_MANAGER_WANTED, 5),
    ],
)
def test_matches_prometheus_client_on_real_scrapes(
    fixture: str, wanted: set[str], expected_families: int
) -> None:
    text = _read(fixture)
    result = parse_exposition(text, wanted)
    assert result.errors == ()
    expected = _reference(text, wanted)
    assert _ours(result.samples) == expected
    present = set(_declared(text)) & wanted
    assert len(present) == expected_families
    accept = accepted_names(wanted)
    assert {s.name for s in result.samples} <= accept
    assert result.lines_kept == len(result.samples) == sum(expected.values())
    assert result.lines_total == text.count("\n")


@pytest.mark.parametrize(
    "fixture",
    [
        "nri-k8s-1.35_etcd_metrics.prom",
        "qubership_etcd-3.4.3_follower_metrics.prom",
        "nri-k8s-1.35_kube-scheduler_metrics.prom",
        "nri-k8s-1.35_kube-controller-manager_metrics.prom",
    ],
)
def test_every_family_matches_prometheus_client(fixture: str) -> None:
    text = _read(fixture)
    wanted = set(_declared(text))
    result = parse_exposition(text, wanted)
    assert result.errors == ()
    assert _ours(result.samples) == _reference(text, wanted)
    sample_lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert result.lines_kept == len(sample_lines)


def test_real_values_read_correctly() -> None:
    apiserver = parse_exposition(
        _read("nri-k8s-1.35_kube-apiserver_metrics.prom"),
        {"rest_client_exec_plugin_ttl_seconds", "apiserver_flowcontrol_nominal_limit_seats"},
    )
    ttl = [s.value for s in apiserver.samples if s.name == "rest_client_exec_plugin_ttl_seconds"]
    assert ttl == [math.inf]
    seats = {
        dict(s.labels)["priority_level"]: s.value
        for s in apiserver.samples
        if s.name == "apiserver_flowcontrol_nominal_limit_seats"
    }
    assert seats["exempt"] == 0.0
    assert len(seats) == 8
    etcd = parse_exposition(
        _read("qubership_etcd-3.4.3_follower_metrics.prom"),
        {"etcd_disk_wal_fsync_duration_seconds", "etcd_server_is_leader"},
    )
    by_name = {(s.name, s.labels): s.value for s in etcd.samples}
    assert by_name[("etcd_server_is_leader", ())] == 0.0
    assert by_name[("etcd_disk_wal_fsync_duration_seconds_count", ())] == 3745994.0
    assert by_name[("etcd_disk_wal_fsync_duration_seconds_bucket", (("le", "0.004"),))] == 2267522


def test_controller_manager_zone_label_is_the_zone_key() -> None:
    # A single minikube node without topology labels: GetZoneKey gives "".
    result = parse_exposition(
        _read("nri-k8s-1.35_kube-controller-manager_metrics.prom"), {"node_collector_zone_size"}
    )
    assert [(s.labels, s.value) for s in result.samples] == [((("zone", zone_key("", "")),), 1.0)]


def test_histogram_family_matches_only_its_suffixes() -> None:
    text = (
        'x_bucket{le="1"} 1\n'
        'x_bucket{le="+Inf"} 2\n'
        "x_sum 3\n"
        "x_count 2\n"
        "x_total 9\n"
        "x_created 9\n"
        "xy 9\n"
        "x 4\n"
        "y_bucket 9\n"
    )
    names = [s.name for s in parse_exposition(text, {"x"}).samples]
    assert names == ["x_bucket", "x_bucket", "x_sum", "x_count", "x"]


def test_counter_wanted_by_exact_sample_name() -> None:
    text = "c_total 5\nc 6\nc_total_bucket 7\n"
    result = parse_exposition(text, ["c_total"])
    assert [(s.name, s.value) for s in result.samples] == [
        ("c_total", 5.0),
        ("c_total_bucket", 7.0),
    ]


def test_unwanted_lines_are_not_parsed_or_reported() -> None:
    text = 'junk{a="unterminated} 1\nok 1\ngarbage here too\n'
    result = parse_exposition(text, {"ok"})
    assert result.errors == ()
    assert [s.name for s in result.samples] == ["ok"]


def test_escapes_in_label_values() -> None:
    text = 'm{a="x\\\\y",b="say \\"hi\\"",c="two\\nlines",d="tab\\t"} 1\n'
    (sample,) = parse_exposition(text, {"m"}).samples
    assert dict(sample.labels) == {
        "a": "x\\y",
        "b": 'say "hi"',
        "c": "two\nlines",
        "d": "tab\\t",  # unknown escapes are kept, as Prometheus does
    }


def test_escaped_backslash_before_closing_quote() -> None:
    text = 'm{a="ends with \\\\",b="next"} 2\n'
    (sample,) = parse_exposition(text, {"m"}).samples
    assert sample.labels == (("a", "ends with \\"), ("b", "next"))
    assert sample.value == 2.0


def test_commas_braces_and_equals_inside_values() -> None:
    text = 'm{a="1,2}",b="{k=v}, 3 x",c=""} 7\n'
    (sample,) = parse_exposition(text, {"m"}).samples
    assert sample.labels == (("a", "1,2}"), ("b", "{k=v}, 3 x"), ("c", ""))
    assert sample.value == 7.0


def test_nul_in_zone_label() -> None:
    key = zone_key("us-east1", "us-east1-b")
    text = f'node_collector_zone_health{{zone="{key}"}} 100\n'
    assert "\x00" in text
    (sample,) = parse_exposition(text, {"node_collector_zone_health"}).samples
    assert sample.labels == (("zone", "us-east1:\x00:us-east1-b"),)
    assert sample.value == 100.0


def test_special_and_scientific_values_and_timestamps() -> None:
    lines = ["v 1", "v +Inf", "v -Inf", "v NaN", "v 2.5e-05", "v 1E3", "v -0.5 1700000000000"]
    lines += ["v 3 -12", "v\t4"]
    # One series per line (the same series twice in one scrape is a duplicate).
    text = "".join(f"{ln.replace('v', f'v{i}', 1)}\n" for i, ln in enumerate(lines))
    result = parse_exposition(text, {f"v{i}" for i in range(len(lines))})
    assert result.errors == ()
    values = [s.value for s in result.samples]
    assert values[:3] == [1.0, math.inf, -math.inf]
    assert math.isnan(values[3])
    assert values[4:] == [2.5e-05, 1000.0, -0.5, 3.0, 4.0]


def test_labels_sorted_empty_set_and_trailing_comma() -> None:
    text = 'm{} 1\nm{z="1",a="2",m="3",} 2\nm { b = "x" } 3\n'
    result = parse_exposition(text, {"m"})
    assert result.errors == ()
    assert [s.labels for s in result.samples] == [
        (),
        (("a", "2"), ("m", "3"), ("z", "1")),
        (("b", "x"),),
    ]


def test_label_strings_are_interned() -> None:
    text = 'm{verb="LIST",code="200"} 1\nm{verb="LIST",code="200x"} 2\n'
    first, second = parse_exposition(text, {"m"}).samples
    assert first.labels[1][1] is second.labels[1][1]  # "LIST" from two different lines
    assert first.labels[0][0] is second.labels[0][0]
    assert first.labels[1][1] is sys.intern("LIST")


def test_crlf_comments_and_no_trailing_newline() -> None:
    text = (
        '# HELP m a "quoted" {help} text\r\n# TYPE m gauge\r\n\r\n  m{a="b"} 1\r\n'
        "# just a comment\r\nm 2"
    )
    result = parse_exposition(text, {"m"})
    assert result.errors == ()
    assert [(s.labels, s.value) for s in result.samples] == [((("a", "b"),), 1.0), ((), 2.0)]
    assert result.lines_total == 6
    assert result.lines_kept == 2


def test_empty_text() -> None:
    result = parse_exposition("", {"m"})
    assert (result.samples, result.errors, result.lines_total, result.lines_kept) == ((), (), 0, 0)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('m{a="b} 1', "unterminated label value"),
        ('m{a="b\\', "unterminated label value"),
        ('m{a="b"', "unterminated label set"),
        ("m{a=b} 1", "label 'a' value is not quoted"),
        ('m{1a="b"} 1', "invalid label name '1a'"),
        ('m{a="b" c="d"} 1', "expected ',' or '}' after label 'a'"),
        ('m{a="b",a="c"} 1', "duplicate label 'a'"),
        ('m{a="\\\\",a="c"} 1', "duplicate label 'a'"),
        ("m{a} 1", "label without '='"),
        ("m", "missing value"),
        ("m\r", "missing value"),
        ('m{a="b"}', "missing value"),
        ("m abc", "invalid value 'abc'"),
        ("m 1_000", "invalid value '1_000'"),
        ("m 1 2 3", "unexpected text after value and timestamp"),
        ("m 1 12.5", "invalid timestamp '12.5'"),
    ],
)
def test_malformed_line_is_reported_and_others_kept(line: str, problem: str) -> None:
    text = f'm 1\n{line}\nm{{ok="yes"}} 3\n'
    result = parse_exposition(text, {"m"})
    assert result.errors == (f"line 2: {problem}",)
    assert [(s.labels, s.value) for s in result.samples] == [((), 1.0), ((("ok", "yes"),), 3.0)]
    assert result.lines_total == 3
    assert result.lines_kept == 2


def test_a_bad_label_block_is_reported_in_every_scrape_and_a_good_one_read_in_each() -> None:
    """Label blocks are remembered across scrapes; a block that failed is not."""
    text = 'm{a="b",a="c"} 1\nm{x="1",y="2"} 2\n'
    for _ in range(3):
        result = parse_exposition(text, {"m"})
        assert result.errors == ("line 1: duplicate label 'a'",)
        assert [(s.labels, s.value) for s in result.samples] == [((("x", "1"), ("y", "2")), 2.0)]
