"""Audit events (audit.k8s.io/v1 JSON lines) read and folded into who called the
apiserver: each expectation is counted here by hand or by a plain Counter over the same
records, never by the fold under test.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.model import audit_digest
from ktop.model.audit_digest import AuditFold
from ktop.model.audit_event import AuditLineError, parse_event, parse_line
from ktop.model.flow_match import Classification, RequestFacts
from ktop.sources.audit_log import AuditInputError, read_audit_logs

T0 = datetime(2026, 12, 7, 3, 10, tzinfo=UTC).timestamp()


def stamp(t: float) -> str:
    """RFC 3339 with microseconds, as the apiserver writes it."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event(
    t: float = T0,
    *,
    user: str = "alice",
    groups: tuple[str, ...] = ("system:authenticated",),
    verb: str = "list",
    resource: str | None = "pods",
    group: str = "",
    sub: str = "",
    namespace: str = "default",
    code: int = 200,
    latency_s: float = 0.25,
    agent: str = "kubectl/v1.35.0",
    stage: str = "ResponseComplete",
    **extra: Any,
) -> dict[str, Any]:
    """An audit event shaped as kube-apiserver writes one at Metadata level."""
    e: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": f"id-{t:.6f}-{user}-{verb}",
        "stage": stage,
        "requestURI": f"/api/v1/namespaces/{namespace}/{resource}?limit=500",
        "verb": verb,
        "user": {"username": user, "groups": list(groups)},
        "sourceIPs": ["10.0.0.1"],
        "userAgent": agent,
        "responseStatus": {"metadata": {}, "code": code},
        "requestReceivedTimestamp": stamp(t),
        "stageTimestamp": stamp(t + latency_s),
        **extra,
    }
    if resource is not None:
        ref: dict[str, Any] = {"resource": resource, "namespace": namespace, "apiVersion": "v1"}
        if group:
            ref["apiGroup"] = group
        if sub:
            ref["subresource"] = sub
        e["objectRef"] = ref
    else:
        e["requestURI"] = "/healthz?verbose=1"
    return e


def line(e: dict[str, Any]) -> bytes:
    return json.dumps(e).encode() + b"\n"


def test_a_completed_request_is_read_with_its_facts() -> None:
    r = parse_line(line(event(group="apps", resource="deployments", verb="get", code=429)))
    assert r is not None
    assert r.at == pytest.approx(T0)
    assert r.latency_s == pytest.approx(0.25, abs=1e-5)
    assert r.code == 429
    assert r.resource == "deployments.apps"
    assert r.facts == RequestFacts(
        user="alice",
        groups=("system:authenticated",),
        verb="get",
        resource_request=True,
        api_group="apps",
        resource="deployments",
        namespace="default",
    )


def test_earlier_stages_and_blank_lines_are_not_requests() -> None:
    assert parse_line(line(event(stage="RequestReceived"))) is None
    assert parse_line(line(event(stage="ResponseStarted"))) is None
    assert parse_line(b"   \n") is None


def test_long_running_requests_have_no_latency() -> None:
    watch = parse_event(event(verb="watch", latency_s=300))
    logs = parse_event(event(verb="get", sub="log", latency_s=120))
    assert watch is not None and watch.latency_s is None
    assert logs is not None and logs.latency_s is None and logs.resource == "pods/log"


def test_a_non_resource_request_is_its_path() -> None:
    r = parse_event(event(resource=None, verb="get"))
    assert r is not None
    assert r.resource == "/healthz"
    assert not r.facts.resource_request and r.facts.path == "/healthz"


def test_an_impersonated_request_counts_as_the_user_it_acts_as() -> None:
    r = parse_event(event(user="admin", impersonatedUser={"username": "bob", "groups": ["team"]}))
    assert r is not None
    assert (r.facts.user, r.facts.groups, r.impersonated_by) == ("bob", ("team",), "admin")


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (line(event(stage="Nonsense")), "stage 'Nonsense'"),
        (line({**event(), "verb": ""}), "verb is missing"),
        (line({**event(), "requestReceivedTimestamp": "yesterday"}), "not an RFC 3339 time"),
        (line({**event(), "user": {}}), "user.username is missing"),
        (line({**event(), "kind": "Pod"}), "not an audit Event"),
    ],
    ids=["not-json", "not-object", "bad-stage", "no-verb", "bad-time", "no-user", "not-event"],
)
def test_a_malformed_line_says_what_is_wrong(raw: bytes, words: str) -> None:
    with pytest.raises(AuditLineError, match=words):
        parse_line(raw)


@pytest.mark.fuzz
@given(st.binary(max_size=400) | st.text(max_size=200).map(str.encode))
def test_no_line_crashes_the_parser(raw: bytes) -> None:
    with contextlib.suppress(AuditLineError):
        parse_line(raw)


@pytest.mark.fuzz
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda kids: (
            st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4)
        ),
        max_leaves=20,
    ),
    st.sampled_from(["user", "objectRef", "responseStatus", "impersonatedUser", "verb", "stage"]),
)
def test_no_field_of_any_type_crashes_the_parser(value: Any, field: str) -> None:
    e = {**event(), field: value}
    with contextlib.suppress(AuditLineError):
        parse_event(e)


def _classify(f: RequestFacts) -> Classification | None:
    return Classification("fs-" + f.user, "pl-" + f.user) if f.user != "nobody" else None


def test_the_fold_counts_what_a_plain_count_counts() -> None:
    rnd = random.Random(7)
    users = [f"user-{i}" for i in range(12)]
    records = []
    for _ in range(3000):
        u = rnd.choice(users[: rnd.randint(1, 12)])  # skewed: early users commoner
        t = T0 + rnd.uniform(0, 600)
        code = 429 if rnd.random() < 0.1 else 200
        r = parse_event(event(t, user=u, verb=rnd.choice(["list", "get"]), code=code))
        assert r is not None
        records.append(r)
    fold = AuditFold(_classify)
    for r in records:
        fold.add(r)
    d = fold.digest(["f"], "test")
    per_client = Counter((r.facts.user, r.user_agent, r.facts.verb, r.resource) for r in records)
    rejected = Counter(
        (r.facts.user, r.user_agent, r.facts.verb, r.resource) for r in records if r.code == 429
    )
    assert d.requests == len(records)
    assert d.rejected == sum(rejected.values())
    expected_top = sorted(per_client.items(), key=lambda kv: (-kv[1], kv[0]))
    got = [((c.user, c.user_agent, c.verb, c.resource), c.requests) for c in d.clients]
    assert got[: len(expected_top)] == expected_top[: audit_digest.TOP_CLIENTS]
    for c in d.clients:
        key = (c.user, c.user_agent, c.verb, c.resource)
        assert c.rejected == rejected[key]
        assert (c.flow_schema, c.priority_level) == (f"fs-{c.user}", f"pl-{c.user}")
        assert not c.at_least
    per_minute = Counter(int(r.at // 60 * 60) for r in records)
    assert {m.minute: m.requests for m in d.minutes} == per_minute
    peak_minute, peak_n = max(per_minute.items(), key=lambda kv: (kv[1], -kv[0]))
    assert d.peak is not None and (d.peak.minute, d.peak.requests) == (peak_minute, peak_n)


def test_latency_p99_is_the_upper_edge_of_its_bucket() -> None:
    fold = AuditFold(_classify)
    latencies = [0.01] * 98 + [2.0, 2.0]  # the 99th of 100 is 2 s
    for i, lat in enumerate(latencies):
        r = parse_event(event(T0 + i, latency_s=lat))
        assert r is not None
        fold.add(r)
    (c,) = fold.digest([], "").clients
    edge = min(e for e in audit_digest.LATENCY_EDGES_S if e >= 2.0)
    assert c.latency_p99_s == pytest.approx(edge)
    assert 2.0 <= edge < 2.0 * 1.5


def test_memory_is_bounded_and_a_heavy_client_survives_a_crowd(monkeypatch: Any) -> None:
    monkeypatch.setattr(audit_digest, "MAX_CLIENTS", 64)
    fold = AuditFold(_classify)
    heavy = 0
    for i in range(5000):
        if i % 5 == 0:
            user, heavy = "flooder", heavy + 1
        else:
            user = f"once-{i}"
        r = parse_event(event(T0 + i * 0.01, user=user))
        assert r is not None
        fold.add(r)
        assert len(fold._clients) <= 64  # the bound itself is under test
    d = fold.digest([], "")
    assert d.clients[0].user == "flooder"
    assert d.clients[0].requests == heavy  # tallied from its first request, never dropped
    assert not d.clients[0].at_least
    assert d.dropped > 0
    assert d.requests == 5000


def test_the_window_keeps_only_requests_received_in_it() -> None:
    fold = AuditFold(_classify, start=T0 + 60, end=T0 + 120)
    for t in (T0, T0 + 60, T0 + 90, T0 + 120):
        r = parse_event(event(t))
        assert r is not None
        fold.add(r)
    d = fold.digest([], "")
    assert (d.requests, d.outside, d.first, d.last) == (2, 2, T0 + 60, T0 + 90)


def _write(path: Path, lines: list[bytes], gz: bool = False) -> Path:
    data = b"".join(lines)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def test_files_gzipped_or_not_and_bad_lines_are_named(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.log", [line(event(T0)), b"garbage\n", line(event(T0 + 1))])
    b = _write(tmp_path / "b.log.gz", [line(event(T0 + 2, user="bob"))], gz=True)
    d = read_audit_logs([str(a), str(b)])
    assert d.requests == 3 and d.malformed == 1
    assert any(p.startswith(f"{a} line 2: not JSON") for p in d.problems)
    assert {c.user for c in d.clients} == {"alice", "bob"}
    assert "default FlowSchemas" in d.classified_by


def test_a_cut_gzip_keeps_what_came_before_the_cut(tmp_path: Path) -> None:
    whole = gzip.compress(b"".join(line(event(T0 + i)) for i in range(2000)))
    cut = tmp_path / "cut.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    d = read_audit_logs([str(cut)])
    assert 0 < d.requests < 2000
    assert any("cut or corrupt" in p and "lines before it are counted" in p for p in d.problems)


def test_a_must_gather_directory_gives_its_kube_apiserver_audit_logs(tmp_path: Path) -> None:
    logs = tmp_path / "image-dir" / "audit_logs" / "kube-apiserver"
    logs.mkdir(parents=True)
    _write(logs / "master-0-audit.log.gz", [line(event(T0))], gz=True)
    other = tmp_path / "image-dir" / "audit_logs" / "oauth-server"
    other.mkdir()
    _write(other / "x.log", [line(event(T0, user="not-counted"))])
    d = read_audit_logs([str(tmp_path)])
    assert d.requests == 1 and d.files == (str(logs / "master-0-audit.log.gz"),)


def test_nothing_readable_is_an_error_naming_each_reason(tmp_path: Path) -> None:
    with pytest.raises(AuditInputError, match="no such file"):
        read_audit_logs([str(tmp_path / "missing.log")])


def test_an_overlong_line_is_skipped_and_the_next_read(tmp_path: Path, monkeypatch: Any) -> None:
    from ktop.sources import audit_log

    monkeypatch.setattr(audit_log, "MAX_LINE_BYTES", 2000)
    f = _write(tmp_path / "a.log", [b"x" * 5000 + b"\n", line(event(T0))])
    d = read_audit_logs([str(f)])
    assert d.requests == 1 and d.malformed == 1
    assert any("line 1: over 2000 bytes" in p for p in d.problems)
