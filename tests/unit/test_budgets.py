"""Budgets kept by tests (docs/testing.md, "Budgets"): no module over 500 lines but the
few named below with their reason, a line budget for ``ktop/``, a budget of duplicated
blocks, and the 90 s limit on a test's call (tests/conftest.py).
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from pylint.checkers.symilar import Symilar

from tests.conftest import CALL_TIME_LIMIT_S, over_time_limit, slow_reason

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

MODULE_LINE_LIMIT = 500
"""The most lines a Python module under ktop/, benchmarks/ or scripts/ may have."""

CHECKED_DIRS = ("ktop", "benchmarks", "scripts")


class Allowance(NamedTuple):
    """A module over the limit for now: its size when it was listed, and why."""

    lines: int
    reason: str


OVER_THE_LIMIT = {
    "benchmarks/scale/run.py": Allowance(
        624, "a benchmark driver written before the limit; split it when it next changes"
    ),
    "benchmarks/soak.py": Allowance(
        929, "a benchmark driver written before the limit; split it when it next changes"
    ),
}
"""Modules allowed over the limit, never more than the lines they had when listed. The
list only shrinks: lower an entry when its module shrinks, remove it when the module
drops to the limit (the test says so), never add one."""

KTOP_LINE_BUDGET = 55_370
"""The most lines all of ktop/'s Python may have (``find ktop -name '*.py' | xargs cat | wc
-l``). 46,517 when the architecture issue began; the hardening of recordings, secrets and
input (bounded parsers, the record directory, redaction, escaping, option checks) and the
first architecture steps (the area registry, the runner and one way to build a hub, typed
reading handles, messages and reactives) brought it to 48,572: the registries replaced
tables but added more than they removed. Raised since only by the new features of the
first-minute and quit issues, each stated in CHANGELOG.md (a one-shot's look-back and
onsets, lost etcd members, baselines and held onsets, skew against peers and the lab's
rolling restart, the headline's critical findings and place, the connecting state, a
bounded stop): 50,140 lines then. Five dead helpers removed (50,190), then the provider
profiles of the providers issue (detection, OpenShift's and EKS's component locations,
the reasons on GKE and AKS, their generated doc: about 630 lines) and the lab's
OpenShift-like and EKS-like layouts (about 370, the aggregated metrics API's backend
among them): 51,187. Then the audit-log triage of the after-the-fact issue (the audit
event reader and its bounded fold, the FlowSchema classifier, the source that streams
files, its evidence, JSON and text, the command's options: about 1,500 lines): 52,684;
a must-gather read as a bundle (its paths, its time, its APF dumps, its etcd_info:
about 380); and the rebuild of a past span from Prometheus history (its source and
the record command's body, reusing the backfill's reads: about 170): 53,321; and a
promtool OpenMetrics slice read as scrapes (its line parser, its streamed fold, its
source and record body, the must-gather's slice: about 370): 53,687; then managed and
global Prometheus of the providers issue (a token command run, cached and refreshed, a
tenant header, a query offset, the Prometheus options as one table: about 440): 54,133;
and etcd alarms (the reading, its finding and evidence, the must-gather's alarm list:
about 150, the etcd evidence then a module of its own): 54,378; and `ktop replay DIR` of
a bundle or must-gather (its timeline source and the command's body: about 165): 54,544;
and zones read from the node lifecycle controller's gauges by triage when ktop's node
list is not there (a history or slice rebuilt as metrics-only mode, a list loading:
about 60): 54,607; and an etcd member's recent restart from its own start time (its
evidence, the restart reading shared with the apiservers' in a module of its own): 54,651;
non-finite evidence values written as the other values are (∞): 54,662; the snapshot's
wait for whole first lists (10) and the idlest apiserver against its peers (17): 54,689;
node readiness from kube-state-metrics in a span rebuilt from Prometheus history (its
range queries per chunk, one reason text shared with the live poll: 87): 54,776; a
bundle's files named by each finding (noted per pane as the readers read, grouped, in
the JSON and text, its section of the generated bundle doc: 79): 54,855; one body for a
source recorded to its end (3); SigV4 for Amazon Managed Service for Prometheus (the
signer, its two options, the EKS profile's command: 135): 54,993; OpenShift's Thanos
Querier found by --prometheus auto and sent the kubeconfig's token, an untrusted
certificate named (84): 55,077; the lab's OpenShift monitoring endpoint (the auth proxy,
the Route and its CRD, one CRD builder for both of the lab's, the view role: 227):
55,304; the scheduler's and controller-manager's restarts on the HA path (their start
times kept with their leader status, two evidence specs and readers: 61): 55,365.
Registries replace tables, so ktop/ should shrink: when it has, lower this to the new
count plus about 100 lines. Raised only by a feature's own new code, never for a
refactoring."""

DUPLICATE_MIN_LINES = 6
"""The shortest run of equal lines (comments, docstrings, blank lines and imports left
out) that counts as a duplicated block."""

DUPLICATE_BUDGET = 2
"""The most duplicated blocks pylint's similarity checker finds in ktop/: 2 when set (the
filter actions of the findings and timeline screens; the model's delegating properties in
the hub and in ModelState). It must only go down: lower it whenever a block is removed."""


def python_files(top: str) -> list[Path]:
    """Every Python file under ``top`` (a directory of the repository), sorted."""
    return sorted((ROOT / top).rglob("*.py"))


def line_count(path: Path) -> int:
    """How many lines a file has, as ``wc -l`` counts them."""
    return path.read_bytes().count(b"\n")


def test_no_module_is_over_the_line_limit_but_the_listed_ones() -> None:
    over = {
        str(path.relative_to(ROOT)): n
        for top in CHECKED_DIRS
        for path in python_files(top)
        if (n := line_count(path)) > MODULE_LINE_LIMIT
    }
    unlisted = {name: n for name, n in over.items() if name not in OVER_THE_LIMIT}
    assert not unlisted, f"over {MODULE_LINE_LIMIT} lines, split them: {unlisted}"


@pytest.mark.parametrize("name", sorted(OVER_THE_LIMIT))
def test_a_listed_module_does_not_grow_and_leaves_the_list_under_the_limit(name: str) -> None:
    path = ROOT / name
    allowed = OVER_THE_LIMIT[name]
    assert path.is_file(), f"{name} is gone: remove its entry from OVER_THE_LIMIT"
    lines = line_count(path)
    assert lines > MODULE_LINE_LIMIT, (
        f"{name} has {lines} lines, within the limit: remove its entry from OVER_THE_LIMIT"
    )
    assert lines <= allowed.lines, (
        f"{name} grew from {allowed.lines} to {lines} lines; it is listed only because it "
        f"is {allowed.reason}: make it smaller, not larger"
    )


def test_ktop_stays_within_its_line_budget() -> None:
    total = sum(line_count(path) for path in python_files("ktop"))
    assert total <= KTOP_LINE_BUDGET, (
        f"ktop/ has {total} lines of Python, over its budget of {KTOP_LINE_BUDGET}"
    )


def without_imports(source: str) -> str:
    """The source with every import statement's lines blanked (line numbers kept).

    pylint's own ``ignore_imports`` parses every file with astroid, several times slower
    than the standard library's parser on ktop/; blank lines are left out either way.
    """
    lines = source.splitlines(keepends=True)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for i in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[i] = "\n"
    return "".join(lines)


def similarity_report(root: Path, paths: list[Path], min_lines: int) -> str:
    """pylint's similarity report over ``paths`` (named relative to ``root``): each block
    of ``min_lines`` or more equal lines and its places."""
    finder = Symilar(min_lines=min_lines, ignore_comments=True, ignore_docstrings=True)
    for path in paths:
        text = without_imports(path.read_text(encoding="utf-8"))
        finder.append_stream(str(path.relative_to(root)), io.StringIO(text))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        finder.run()
    return out.getvalue()


def duplicate_blocks(report: str) -> int:
    """How many duplicated blocks a similarity report lists."""
    return len(re.findall(r"^\d+ similar lines in \d+ files$", report, flags=re.MULTILINE))


def test_duplicated_blocks_in_ktop_stay_within_the_budget() -> None:
    started = time.perf_counter()
    report = similarity_report(ROOT, python_files("ktop"), DUPLICATE_MIN_LINES)
    took_s = time.perf_counter() - started
    found = duplicate_blocks(report)
    assert found <= DUPLICATE_BUDGET, (
        f"{found} duplicated blocks of {DUPLICATE_MIN_LINES}+ lines, over the budget of "
        f"{DUPLICATE_BUDGET} (took {took_s:.1f} s):\n{report}"
    )


def test_the_duplicate_finder_counts_a_copied_block_and_ignores_copied_imports(
    tmp_path: Path,
) -> None:
    imports = "import os\nimport sys\nfrom pathlib import (\n    Path,\n    PurePath,\n)\n"
    body = "".join(f"    total += {i} * value\n" for i in range(7))
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(f"{imports}\n\ndef f(value):\n    total = 0\n{body}")
    (tmp_path / "c.py").write_text(imports + "\nX = 1\n")
    report = similarity_report(tmp_path, sorted(tmp_path.glob("*.py")), DUPLICATE_MIN_LINES)
    assert duplicate_blocks(report) == 1, report
    assert "==a.py:" in report and "==b.py:" in report and "c.py" not in report


def test_without_imports_blanks_only_import_lines_and_keeps_line_numbers() -> None:
    source = "import os\nfrom a import (\n    b,\n)\nx = os.sep\n"
    assert without_imports(source) == "\n\n\n\nx = os.sep\n"


def test_a_slow_reason_is_a_docstring_line_starting_with_slow() -> None:
    doc = """What it proves.

    Slow: the triage samples a 157 s window across the restart.
    """
    assert slow_reason(doc) == "the triage samples a 157 s window across the restart."
    assert slow_reason("What it proves; Slow: not at a line's start.") is None
    assert slow_reason("Slow:   \n") is None
    assert slow_reason(None) is None


def test_a_call_over_the_limit_fails_unless_the_docstring_says_why() -> None:
    limit = CALL_TIME_LIMIT_S
    assert over_time_limit(limit, limit, None) is None
    message = over_time_limit(limit + 0.5, limit, "What it proves.")
    assert message is not None and "90.5 s, over the 90 s limit" in message
    assert over_time_limit(limit + 0.5, limit, "Slow: a fixed 157 s window.") is None


def test_the_hook_fails_a_passing_test_over_the_limit_and_names_the_reason_rule(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_inner='''
        def test_without_reason():
            """Proves something."""

        def test_with_reason():
            """Proves something.

            Slow: it waits for a fixed window.
            """

        def test_failing():
            assert False, "its own failure"
        '''
    )
    # A limit of 0 s: every call takes longer, so the docstrings alone decide.
    # (textual-snapshot keeps one temporary directory per process: not in a run inside one)
    result = pytester.runpytest(
        "-p",
        "tests.conftest",
        "-p",
        "no:textual-snapshot",
        "-p",
        "no:asyncio",
        "-o",
        "call_time_limit_s=0",
    )
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        ["*test_without_reason*", "*over the 0 s limit*'Slow:'*", "*its own failure*"]
    )
