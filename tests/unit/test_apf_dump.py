"""parse_priority_levels on real dumps and the older formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktop.model.apf_dump import ApfDumpError, parse_priority_levels
from ktop.model.events import ApfLevelDump

FIXTURES = Path(__file__).parent.parent / "fixtures"

LEVELS = [
    "catch-all",
    "exempt",
    "global-default",
    "leader-election",
    "node-high",
    "system",
    "workload-high",
    "workload-low",
]


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_kueue_issue_dump() -> None:
    levels = parse_priority_levels(_read("apf_dump_priority_levels.kueue-issue-2973.txt"))
    assert [lv.priority_level for lv in levels] == LEVELS
    by_name = {lv.priority_level: lv for lv in levels}
    assert by_name["global-default"] == ApfLevelDump(
        priority_level="global-default",
        active_queues=4,
        is_idle=False,
        is_quiescing=False,
        waiting_requests=57,
        executing_requests=368,
        dispatched_requests=23614,
        rejected_requests=1533,
        timedout_requests=0,
        cancelled_requests=609,
    )
    assert by_name["exempt"].dispatched_requests == 2290
    assert by_name["catch-all"].is_idle is True


def test_docs_example_reads_only_the_priority_levels_block() -> None:
    text = _read("apf_debug_dumps.k8s-docs-example.txt")
    assert text.startswith("### GET /debug/api_priority_and_fairness/dump_priority_levels")
    levels = parse_priority_levels(text)
    assert [lv.priority_level for lv in levels] == LEVELS
    dispatched = {lv.priority_level: lv.dispatched_requests for lv in levels}
    assert dispatched == {
        "catch-all": 1,
        "exempt": 0,
        "global-default": 46,
        "leader-election": 4,
        "node-high": 34,
        "system": 48,
        "workload-high": 500,
        "workload-low": 0,
    }
    assert all(lv.is_idle is True and lv.waiting_requests == 0 for lv in levels)


def test_six_column_form_with_none_exempt_row() -> None:
    # <= 1.26: six columns, and every cell of the exempt row is <none>.
    text = (
        "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests\n"
        "exempt,            <none>,       <none>, <none>,      <none>,          <none>\n"
        "global-default,    2,            false,  true,        7,               30\n"
    )
    exempt, global_default = parse_priority_levels(text)
    assert exempt == ApfLevelDump("exempt", None, None, None, None, None)
    assert global_default == ApfLevelDump("global-default", 2, False, True, 7, 30)
    assert global_default.dispatched_requests is None


def test_crlf_and_block_ending_at_another_header() -> None:
    text = (
        "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, "
        "ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, "
        "CancelledRequests\r\n"
        "system, 0, true, false, 0, 1, 2, 3, 4, 5\r\n"
        "PriorityLevelName, Index, PendingRequests, ExecutingRequests, SeatsInUse, "
        "NextDispatchR, InitialSeatsSum, MaxSeatsSum, TotalWorkSum\r\n"
        "system, 0, 0, 0, 0, 0.00000000ss, 0, 0, 0.00000000ss\r\n"
    )
    assert parse_priority_levels(text) == (
        ApfLevelDump("system", 0, True, False, 0, 1, 2, 3, 4, 5),
    )


def test_header_only_gives_no_levels() -> None:
    header = (
        "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests\n"
    )
    assert parse_priority_levels(header) == ()


@pytest.mark.parametrize(
    "text",
    [
        "",
        'Forbidden: User "x" cannot get path "/debug/api_priority_and_fairness/"\n',
        # dump_queues alone is not a priority-levels dump
        "PriorityLevelName, Index, PendingRequests, ExecutingRequests\nexempt, 0, 0, 0\n",
    ],
)
def test_no_header_raises(text: str) -> None:
    with pytest.raises(ApfDumpError, match="no dump_priority_levels header"):
        parse_priority_levels(text)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("system, 0, true, false, 0", "5 cells where the header has 6"),
        ("system, x, true, false, 0, 0", "ActiveQueues is not an integer: 'x'"),
        ("system, 0, yes, false, 0, 0", "IsIdle is not true or false: 'yes'"),
    ],
)
def test_bad_row_raises_with_line_number(row: str, problem: str) -> None:
    text = (
        "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests\n"
        "catch-all, 0, true, false, 0, 0\n"
        f"{row}\n"
    )
    with pytest.raises(ApfDumpError, match=f"line 3: {problem}"):
        parse_priority_levels(text)
