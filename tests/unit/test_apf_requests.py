"""The APF request dump: parsed by column name on real and generated text, folded per
client, bounded, and read live with its size limit. Expected folds are computed here
from the generated rows, not by the parser."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ktop.model.apf_requests import (
    MAX_TALKERS,
    OTHERS,
    REQUESTS_PATH,
    REQUESTS_QUERY,
    ApfRequestsError,
    parse_requests,
)
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.errors import ApiError
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi, status_body

FIXTURE = Path(__file__).parent.parent / "fixtures" / "apf_debug_dumps.k8s-docs-example.txt"
DETAILS_MARK = "### GET /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1"

HEADER_128 = (
    "PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue",
    "FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency",
    "StartTime", "UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion",
    "Resource", "SubResource",
)  # fmt: skip
"""The columns of 1.28+ with request details, as the apiserver writes them."""
HEADER_127 = tuple(c for c in HEADER_128 if c != "StartTime")
"""Before 1.28: no StartTime, and only queued requests are listed."""
ZERO = "0001-01-01T00:00:00Z"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "123Z"


def render(header: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    """Text as the apiserver's tabwriter writes it: cells joined by ``,\\t`` then padded."""
    lines = [header, *[tuple(r.get(c, "") for c in header) for r in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for line in lines:
        cells = [f"{c}," + " " * (widths[i] - len(c) + 1) for i, c in enumerate(line[:-1])]
        out.append("".join(cells) + line[-1])
    return "\n".join(out) + "\n"


def request(
    level: str, user: str, *, executing: bool, seats: int, arrived: float, verb: str, res: str
) -> dict[str, str]:
    return {
        "PriorityLevelName": level,
        "FlowSchemaName": f"fs-{level}",
        "QueueIndex": "3",
        "RequestIndexInQueue": "-1" if executing else "0",
        "FlowDistingsher": user,
        "ArriveTime": _iso(arrived),
        "InitialSeats": str(seats),
        "FinalSeats": "0",
        "AdditionalLatency": "0s",
        "StartTime": _iso(arrived + 0.1) if executing else ZERO,
        "UserName": user,
        "Verb": verb,
        "APIPath": f"/api/v1/{res}",
        "APIVersion": "v1",
        "Resource": res,
    }


def test_the_real_documented_dump_with_details() -> None:
    text = FIXTURE.read_text()
    block = text[text.index(DETAILS_MARK) + len(DETAILS_MARK) :].lstrip("\n")
    at = datetime(2023, 7, 18, 0, 13, 20, tzinfo=UTC).timestamp()
    dump = parse_requests(block, at)
    # Read independently: the rows of the block, split the documented way.
    rows = [[c.strip() for c in line.split(",")] for line in block.splitlines()[1:] if line]
    assert dump.requests == len(rows) and dump.skipped == 0 and dump.executing_listed
    by_user = Counter(r[10] for r in rows)
    got = {(t.priority_level, t.user): t for t in dump.talkers}
    loadtest = got[("workload-low", "system:serviceaccount:default:loadtest")]
    assert loadtest.waiting == by_user["system:serviceaccount:default:loadtest"]
    assert loadtest.waiting_seats == sum(int(r[6]) for r in rows if r[1] == "service-accounts")
    assert loadtest.executing == 0 and loadtest.what == "list configmaps"
    first = min(
        datetime.fromisoformat(r[5][:26] + "+00:00").timestamp()
        for r in rows
        if r[0] == "workload-low"
    )
    assert loadtest.oldest_wait_s == pytest.approx(at - first, abs=1e-3)
    admin = got[("exempt", "system:serviceaccount:system:admin")]
    assert (admin.executing, admin.executing_seats, admin.waiting) == (1, 1, 0)


def test_the_documented_dump_without_details_names_the_distinguisher() -> None:
    text = FIXTURE.read_text()
    start = text.index("PriorityLevelName, FlowSchemaName")
    dump = parse_requests(text[start:], 0.0)
    assert {t.distinguisher for t in dump.talkers} >= {"system:serviceaccount:default:loadtest"}
    assert all(t.user == "" and t.what == "" for t in dump.talkers)


def test_before_1_28_only_queued_requests_are_listed() -> None:
    rows = [request("workload-low", "u", executing=False, seats=1, arrived=10.0, verb="get",
                    res="pods")]  # fmt: skip
    dump = parse_requests(render(HEADER_127, rows), 20.0)
    assert not dump.executing_listed
    assert dump.talkers[0].waiting == 1 and dump.talkers[0].oldest_wait_s == pytest.approx(10.0)


def test_text_that_is_not_a_request_dump_is_refused_by_name() -> None:
    with pytest.raises(ApfRequestsError, match="no dump_requests header"):
        parse_requests("PriorityLevelName, ActiveQueues, IsIdle\nexempt, 0, true\n", 0.0)
    with pytest.raises(ApfRequestsError, match="empty"):
        parse_requests("", 0.0)


def test_a_row_with_the_wrong_cell_count_is_counted_and_skipped() -> None:
    rows = [request("l", "a", executing=True, seats=2, arrived=1.0, verb="get", res="pods")]
    text = render(HEADER_128, rows) + "l, fs, 1, oops\n"
    dump = parse_requests(text, 5.0)
    assert (dump.requests, dump.skipped) == (1, 1)


def test_more_clients_than_kept_are_summed_per_level_so_shares_still_add_up() -> None:
    rows = [
        request("busy", f"user-{i:03d}", executing=True, seats=1 + i % 3, arrived=1.0,
                verb="get", res="pods")
        for i in range(MAX_TALKERS + 50)
    ]  # fmt: skip
    dump = parse_requests(render(HEADER_128, rows), 5.0)
    others = [t for t in dump.talkers if t.user == OTHERS]
    assert len(others) == 1 and len(dump.talkers) == MAX_TALKERS + 1
    assert sum(t.executing_seats for t in dump.talkers) == sum(1 + i % 3 for i in range(250))
    assert sum(t.executing for t in dump.talkers) == len(rows)


request_rows = st.lists(
    st.tuples(
        st.sampled_from(["workload-low", "global-default", "exempt"]),
        st.sampled_from(["alice", "system:serviceaccount:ns:a", "system:node:n1", "bob"]),
        st.booleans(),
        st.integers(1, 10),
        st.floats(0, 1000),
        st.sampled_from(["get", "list", "watch"]),
        st.sampled_from(["pods", "nodes", ""]),
    ),
    max_size=60,
)


@given(request_rows)
@settings(max_examples=80, deadline=None)
def test_the_fold_of_generated_dumps_matches_a_fold_of_the_rows(rows: list[tuple]) -> None:  # type: ignore[type-arg]
    made = [
        request(lv, user, executing=ex, seats=seats, arrived=t, verb=verb, res=res)
        for lv, user, ex, seats, t, verb, res in rows
    ]
    dump = parse_requests(render(HEADER_128, made), 2000.0)
    assert dump.requests == len(rows) and dump.skipped == 0
    want: dict[tuple[str, str], list[int]] = {}
    for lv, user, ex, seats, _, _, _ in rows:
        w = want.setdefault((lv, user), [0, 0, 0, 0])
        w[0 if ex else 2] += 1
        w[1 if ex else 3] += seats
    got = {
        (t.priority_level, t.user): [t.executing, t.executing_seats, t.waiting, t.waiting_seats]
        for t in dump.talkers
    }
    assert got == want


@given(st.text(max_size=400))
@settings(max_examples=200, deadline=None)
def test_any_text_parses_or_is_refused_by_name(text: str) -> None:
    try:
        dump = parse_requests(text, 0.0)
    except ApfRequestsError:
        return
    assert dump.requests + dump.skipped <= text.count("\n") + 1


@given(st.text(alphabet=",\t -:0123456789abcZ\n", max_size=300))
@settings(max_examples=200, deadline=None)
def test_rows_under_a_real_header_never_crash(body: str) -> None:
    dump = parse_requests(", ".join(HEADER_128) + "\n" + body, 0.0)
    assert all(t.executing >= 0 and t.waiting >= 0 for t in dump.talkers)


# ------------------------------------------------------------------ live read, bounded


def _transport(body: bytes, status: int = 200) -> tuple[KubeTransport, FakeApi, CostMeter]:
    def route(c: Call) -> Answer:
        assert c.path == REQUESTS_PATH and c.query == dict(REQUESTS_QUERY)
        if status >= 400:
            return Answer(status, status_body(status, "forbidden: User cannot get path"))
        return Answer(body=body)

    api = FakeApi(route)
    meter = CostMeter()
    return KubeTransport(api, meter), api, meter  # type: ignore[arg-type]


def test_a_dump_past_the_limit_is_cut_after_its_last_whole_line_and_counted() -> None:
    rows = [
        request("l", f"u{i}", executing=False, seats=1, arrived=1.0, verb="get", res="pods")
        for i in range(400)
    ]
    body = render(HEADER_128, rows).encode()
    limit = len(body) // 3
    t, _, meter = _transport(body)
    resp, cut = asyncio.run(t.get_head(REQUESTS_PATH, REQUESTS_QUERY, limit))
    assert cut and len(resp.body) <= limit and resp.body.endswith(b"\n")
    assert body.startswith(resp.body)
    dump = parse_requests(resp.body.decode(), 2.0)
    assert dump.skipped == 0 and 0 < dump.requests < 400
    assert meter.requests_by_destination and sum(meter.bytes_by_destination.values()) >= limit


def test_a_small_dump_is_read_whole() -> None:
    body = render(HEADER_128, []).encode()
    t, _, _ = _transport(body)
    resp, cut = asyncio.run(t.get_head(REQUESTS_PATH, REQUESTS_QUERY, 1 << 20))
    assert not cut and resp.body == body


def test_a_refused_dump_raises_the_apiserver_s_reason() -> None:
    t, _, _ = _transport(b"", status=403)
    with pytest.raises(ApiError, match="403"):
        asyncio.run(t.get_head(REQUESTS_PATH, REQUESTS_QUERY, 1 << 20))
