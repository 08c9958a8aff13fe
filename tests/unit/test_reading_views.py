"""Readings carry their views: a per-member etcd reading's drill-down column (header, width,
format, place, colour from its threshold) and its field in the triage JSON's
``signals.etcd[]`` come from its registry entry, beside the table's and the report's own.
"""

from __future__ import annotations

import dataclasses

import pytest

from ktop.analysis.triage import report
from ktop.model.extractors import per_member
from ktop.model.grading import Threshold
from ktop.model.reading import Column, JsonField
from ktop.model.signals import MEMBER_READINGS
from ktop.model.signals_etcd import ETCD_FSYNC_P99_S
from ktop.model.snapshot_etcd import EtcdSnapshot
from ktop.model.text import fmt_duration
from ktop.ui.render import etcd
from ktop.ui.render.level import STYLE, Level
from tests.functional.factories import AT, member

MEMBERS_TABLE = [
    "status", "member", "leader", "fsync_p50", "fsync_p99", "commit_p99", "db", "in_use",
    "reclaimable", "quota", "db_quota", "frag", "changes", "pending", "failed", "slow_apply",
    "rtt", "last_ok", "error",
]  # fmt: skip
"""The members table's columns: as they were written out by hand before the registry, and
the worked example's ``slow_apply``."""
MEMBER_JSON = [
    "instance", "is_leader", "has_leader", "leader_changes", "wal_fsync_p99_s",
    "backend_commit_p99_s", "db_size_bytes", "db_in_use_bytes", "quota_bytes", "window",
    "error",
]  # fmt: skip
"""``signals.etcd[]``'s fields in order (docs/triage-json.md)."""

EXAMPLE = dataclasses.replace(
    ETCD_FSYNC_P99_S,
    metric="etcd.example_p99_s",
    extract=per_member("peer_rtt_p99_s"),
    threshold=Threshold("example", "s", "test", warn=0.001, critical=0.01),
    chart=None,
    column=Column("example", "example p99", 8, 157, fmt_duration),
    json=JsonField("example_p99_s", 65),
)
"""A new per-member reading: the members' peer round-trip (2 ms) against a 1 ms warning."""


def _members() -> EtcdSnapshot:
    return EtcdSnapshot((member("etcd-0:2379", leader=True),), "etcd-0:2379", leader_known=True)


def test_the_members_table_is_its_own_columns_and_the_readings_in_place() -> None:
    (members, *_) = etcd.tables(_members(), AT)
    assert [c.key for c in members.columns] == MEMBERS_TABLE
    declared = {r.column.key: r.column.header for r in MEMBER_READINGS if r.column is not None}
    shown = {c.key: c.label for c in members.columns}
    assert {k: shown[k] for k in declared} == declared
    assert len(members.rows[0].cells) == len(MEMBERS_TABLE)


def test_the_member_json_is_its_own_fields_and_the_readings_in_place() -> None:
    doc = report.member_json(member("etcd-0:2379", leader=True), 300.0)
    assert list(doc) == MEMBER_JSON
    assert doc["is_leader"] is True and doc["wal_fsync_p99_s"] == 0.004
    assert doc["db_size_bytes"] == 4 * 2**30 and doc["window"] == 300.0


def test_a_new_per_member_reading_gets_its_column_and_json_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    readings = (*MEMBER_READINGS, EXAMPLE)
    monkeypatch.setattr(etcd, "MEMBER_READINGS", readings)
    monkeypatch.setattr(report, "MEMBER_READINGS", readings)
    (members, *_) = etcd.tables(_members(), AT)
    keys = [c.key for c in members.columns]
    assert keys[keys.index("slow_apply") + 1 : keys.index("rtt")] == ["example"]
    cell = members.rows[0].cells[keys.index("example")]
    assert cell.plain.strip().endswith(fmt_duration(0.002))
    assert cell.style == STYLE[Level.WARN]  # 2 ms > the 1 ms warning
    doc = report.member_json(member("etcd-0:2379"), 300.0)
    names = list(doc)
    assert names[names.index("db_size_bytes") + 1] == "example_p99_s"
    assert doc["example_p99_s"] == 0.002
