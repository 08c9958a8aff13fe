"""Property-based fuzzing of every parser of outside text, the converters and kubeconfig
resolution: nothing they are given makes them raise anything but their own error, and
well-formed input generated independently reads back exactly.

The length of the run is set by a Hypothesis profile (tests/fuzzing.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.model.apf_dump import ApfDumpError, parse_priority_levels
from ktop.model.events import Event, LeaseRenewed, ObjectsSkipped
from ktop.model.exposition import MAX_ERRORS, parse_exposition
from ktop.model.failed_scheduling import parse_failed_scheduling
from ktop.scrub import MASK, Secrets
from ktop.sources.convert import ObjectError, node_record, pending_pod_record, quota_record
from ktop.sources.kubeconfig import KubeconfigError, load_context
from ktop.sources.live.handlers import (
    TRIAGE_WARNING_REASONS,
    LeasesHandler,
    WarningEventsHandler,
    table_node_record,
)
from ktop.sources.live.leases import LeaseSampler
from ktop.sources.live.listwatch import ListWatch
from ktop.sources.live.reads import NODE_LEASES, Resource
from ktop.sources.live.rows import Row

pytestmark = pytest.mark.fuzz

METRIC = st.from_regex(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,20}", fullmatch=True)
LABEL = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,12}", fullmatch=True)
VALUE = st.floats(allow_nan=True, allow_infinity=True)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=30,
)

# ------------------------------------------------------------------ exposition


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


SERIES = st.tuples(
    METRIC,
    st.dictionaries(LABEL, st.text(max_size=30), max_size=5),
    VALUE,
    st.booleans(),  # trailing comma
    st.none() | st.integers(min_value=-(2**62), max_value=2**62),  # timestamp
)


@given(st.lists(SERIES, max_size=30, unique_by=lambda s: (s[0], tuple(sorted(s[1].items())))))
def test_exposition_reads_back_what_was_written(series: list[Any]) -> None:
    lines = ["# HELP anything at all", "# TYPE x counter"]
    for name, labels, value, comma, stamp in series:
        block = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
        if labels and comma:
            block += ","
        lines.append(f"{name}{{{block}}} {_fmt(value)}" + ("" if stamp is None else f" {stamp}"))
    result = parse_exposition("\n".join(lines) + "\n", {s[0] for s in series})
    assert result.errors == ()
    assert len(result.samples) == len(series)
    for sample, (name, labels, value, _, _) in zip(result.samples, series, strict=True):
        assert sample.name == name
        assert sample.labels == tuple(sorted(labels.items()))
        assert (math.isnan(sample.value) and math.isnan(value)) or sample.value == value


@given(st.text(max_size=400), st.sets(METRIC, max_size=3))
def test_exposition_never_raises_on_any_text(text: str, extra: set[str]) -> None:
    names = {line.split("{")[0].split(" ")[0] for line in text.splitlines()} | extra
    result = parse_exposition(text, names)
    assert len(result.errors) <= MAX_ERRORS + 1
    assert result.lines_kept == len(result.samples)
    keys = [(s.name, s.labels) for s in result.samples]
    assert len(keys) == len(set(keys))  # never two samples of one series


@given(st.lists(st.sampled_from(['m{a="', "\\", '"', "}", ",", "=", " ", "\t", "b", "1", "\n"])))
def test_exposition_survives_label_syntax_soup(parts: list[str]) -> None:
    parse_exposition("".join(parts), {"m"})


# -------------------------------------------------------------------- APF dump

LEVEL_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,30}", fullmatch=True)
COLUMNS = (
    "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, "
    "DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests"
)
COUNT = st.integers(min_value=0, max_value=10**12)


@given(
    st.lists(
        st.tuples(LEVEL_NAME, COUNT, st.booleans(), st.booleans(), COUNT, COUNT, COUNT, COUNT),
        max_size=12,
    )
)
def test_apf_dump_reads_back_what_was_written(rows: list[Any]) -> None:
    lines = [COLUMNS]
    for name, queues, idle, quiescing, waiting, executing, dispatched, rejected in rows:
        cells = [name, queues, str(idle).lower(), str(quiescing).lower(), waiting, executing]
        cells += [dispatched, rejected, 0, 0]
        lines.append(",\t".join(f"{c:<12}" for c in map(str, cells)))
    levels = parse_priority_levels("\n".join(lines) + "\n")
    assert [lv.priority_level for lv in levels] == [r[0] for r in rows]
    assert [lv.waiting_requests for lv in levels] == [r[4] for r in rows]
    assert [lv.is_idle for lv in levels] == [r[2] for r in rows]
    assert [lv.dispatched_requests for lv in levels] == [r[6] for r in rows]


@given(st.text(max_size=600))
def test_apf_dump_raises_only_its_own_error(text: str) -> None:
    for candidate in (text, COLUMNS + "\n" + text):
        try:
            parse_priority_levels(candidate)
        except ApfDumpError as exc:
            assert len(str(exc)) < 400


# ----------------------------------------------------------- FailedScheduling

REASON = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40
).filter(lambda r: r.strip() == r and ". " not in r and not r.endswith(".") and ", " not in r)


@given(
    st.integers(min_value=1, max_value=10**6),
    st.lists(st.tuples(st.integers(min_value=1, max_value=10**6), REASON), min_size=1, max_size=8),
)
def test_failed_scheduling_reads_back_the_histogram(total: int, entries: list[Any]) -> None:
    body = ", ".join(f"{n} {r}" for n, r in entries)
    message = f"0/{total} nodes are available: {body}."
    parsed = parse_failed_scheduling(message)
    assert parsed.total_nodes == total
    assert parsed.reasons == tuple((r, n) for n, r in entries)


@given(st.text(max_size=500))
def test_failed_scheduling_never_raises(text: str) -> None:
    for candidate in (text, "0/3 nodes are available: " + text):
        parsed = parse_failed_scheduling(candidate)
        assert parsed.raw == candidate or parsed.truncated


# ---------------------------------------------------------------- converters

OBJECT = st.fixed_dictionaries(
    {},
    optional={
        "metadata": JSON | st.fixed_dictionaries({}, optional={"name": JSON, "labels": JSON}),
        "spec": JSON | st.fixed_dictionaries({}, optional={"unschedulable": JSON, "taints": JSON}),
        "status": JSON
        | st.fixed_dictionaries(
            {}, optional={"phase": JSON, "conditions": JSON, "hard": JSON, "used": JSON}
        ),
    },
)


@given(OBJECT)
def test_converters_raise_only_object_error(obj: dict[str, Any]) -> None:
    for convert in (lambda o: node_record(o, "rack"), pending_pod_record, quota_record):
        try:
            record = convert(obj)
        except ObjectError:
            continue
        if record is not None:  # None: a pod that is not Pending
            assert "'None'" not in repr(record)


# ---------------------------------------------------------- kubeconfig resolution


NAME = st.sampled_from(["a", "b"]) | JSON
SERVER = st.sampled_from(["https://h:6443", "http://h", "not a url", "https://h:99999", ""]) | JSON
CLUSTER = JSON | st.fixed_dictionaries(
    {},
    optional={
        "server": SERVER,
        "certificate-authority-data": st.sampled_from(["aGVsbG8=", "%%%"]) | JSON,
        "insecure-skip-tls-verify": JSON,
    },
)
USER = JSON | st.fixed_dictionaries(
    {},
    optional={
        "token": JSON,
        "password": JSON,
        "client-key-data": st.sampled_from(["aGVsbG8=", "%%%"]) | JSON,
        "exec": JSON
        | st.fixed_dictionaries(
            {}, optional={"command": JSON, "apiVersion": JSON, "args": JSON, "env": JSON}
        ),
    },
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "current-context": NAME,
            "contexts": JSON
            | st.lists(
                st.fixed_dictionaries(
                    {"name": NAME},
                    optional={
                        "context": JSON
                        | st.fixed_dictionaries({}, optional={"cluster": NAME, "user": NAME})
                    },
                )
            ),
            "clusters": JSON
            | st.lists(st.fixed_dictionaries({"name": NAME}, optional={"cluster": CLUSTER})),
            "users": JSON
            | st.lists(st.fixed_dictionaries({"name": NAME}, optional={"user": USER})),
        },
    ),
    st.none() | NAME.filter(lambda n: isinstance(n, str)),
)
def test_kubeconfig_resolution_raises_only_its_error(
    tmp_path: Path, config: dict[str, Any], context: Any
) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    try:
        resolved = load_context(str(path), context, env={}, secrets=Secrets())
    except KubeconfigError as exc:
        assert "\n" not in str(exc)
        return
    # What resolves is usable: a real server URL, and a one-context config.
    assert resolved.info.server.startswith(("http://", "https://"))
    assert [c["name"] for c in resolved.config["contexts"]] == [resolved.info.name]


@given(st.binary(max_size=300))
def test_kubeconfig_of_any_bytes_raises_only_its_error(tmp_path_factory: Any, raw: bytes) -> None:
    path = tmp_path_factory.mktemp("kc") / "config"
    path.write_bytes(raw)
    try:
        load_context(str(path), None, env={}, secrets=Secrets())
    except KubeconfigError as exc:
        assert "\n" not in str(exc)


# ---------------------------------------------------------------------- scrub


@given(st.text(min_size=8, max_size=40).filter(lambda s: s.strip() == s), st.text(max_size=80))
def test_a_registered_secret_never_survives_scrub(secret: str, around: str) -> None:
    secrets = Secrets()
    secrets.add(secret)
    out = secrets.scrub(around + secret + around)
    assert secret not in out
    assert MASK in out


# ------------------------------------------------------- handlers and the list/watch path

TIME = st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5+02:00", "2026-01-01"])
LEASE = st.fixed_dictionaries(
    {},
    optional={
        "metadata": JSON | st.fixed_dictionaries({}, optional={"name": JSON | LABEL}),
        "spec": JSON | st.fixed_dictionaries({}, optional={"renewTime": JSON | TIME}),
    },
)
WARNING = st.fixed_dictionaries(
    {},
    optional={
        "metadata": JSON | st.fixed_dictionaries({}, optional={"name": JSON, "namespace": JSON}),
        "reason": st.sampled_from(sorted(TRIAGE_WARNING_REASONS)) | JSON,
        "involvedObject": JSON
        | st.fixed_dictionaries({}, optional={"kind": JSON, "name": JSON, "namespace": JSON}),
        "message": JSON,
        "count": JSON,
    },
)
ROW = st.fixed_dictionaries(
    {},
    optional={
        "metadata": JSON | st.fixed_dictionaries({}, optional={"name": JSON, "labels": JSON}),
        "cells": JSON
        | st.fixed_dictionaries(
            {}, optional={"Status": JSON | st.sampled_from(["Ready", "NotReady,x", "Unknown"])}
        ),
    },
)


def _events_readable(events: Any) -> None:
    """What a converter returned: events without the text ``'None'`` anywhere."""
    assert "'None'" not in repr(list(events))


@given(LEASE, WARNING)
def test_lease_and_warning_handlers_raise_only_object_error(
    lease: dict[str, Any], warning: dict[str, Any]
) -> None:
    for handler, obj in ((LeasesHandler(), lease), (WarningEventsHandler(), warning)):
        try:
            handler.key(Row(obj))
            events = handler.upsert(1000.0, Row(obj))
        except ObjectError:
            continue
        _events_readable(events)


@given(ROW)
def test_table_node_record_raises_only_object_error(row: dict[str, Any]) -> None:
    try:
        record = table_node_record(row, "rack")
    except ObjectError:
        return
    assert "'None'" not in repr(record)


def _resource(feed: str) -> Resource:
    return Resource(feed, f"/fuzz/{feed}", feed)


@given(st.lists(JSON | LEASE | WARNING, max_size=8))
def test_list_watch_upsert_skips_and_counts_whatever_it_cannot_read(items: list[Any]) -> None:
    for handler in (LeasesHandler(), WarningEventsHandler()):
        lw = ListWatch(None, _resource("fuzz"), handler, lambda: 5.0)  # type: ignore[arg-type]
        events: list[Event] = []
        keys = [lw.upsert_item(5.0, item, events) for item in items]
        assert lw.skipped == keys.count(None)
        assert all(k is None or isinstance(k, str) for k in keys)
        _events_readable(events)


@given(st.lists(JSON | LEASE, max_size=8), JSON)
def test_a_lease_page_never_fails_the_round(items: list[Any], meta: Any) -> None:
    sampler = LeaseSampler(
        None,  # type: ignore[arg-type]
        NODE_LEASES,
        lambda: 5.0,
        set,
    )
    emitted: list[Event] = []
    names = sampler._emit_items({"items": items, "metadata": meta}, emitted.extend)
    renewed = {e.node for e in emitted if isinstance(e, LeaseRenewed)}
    assert renewed <= names
    skipped = [e for e in emitted if isinstance(e, ObjectsSkipped)]
    readable = sum(1 for item in items if _lease_readable(item))
    assert len(names) <= readable
    if readable < len(items):
        assert len(skipped) == 1 and skipped[0].skipped_total == len(items) - readable
    else:
        assert not skipped


def _lease_readable(item: Any) -> bool:
    """Independently of the handler: a Lease whose metadata, name and spec have the types
    the API gives them (or are absent or null)."""
    if not isinstance(item, dict):
        return False
    meta, spec = item.get("metadata"), item.get("spec")
    if meta is not None and not isinstance(meta, dict):
        return False
    name = meta.get("name") if isinstance(meta, dict) else None
    if name is not None and (isinstance(name, bool) or not isinstance(name, str | int | float)):
        return False
    return spec is None or isinstance(spec, dict)
