"""Every test runs without the developer's own ktop config directory (config.toml, themes),
and a test whose call takes more than 90 s fails unless its docstring says why it is slow.

The time limit is the ini option ``call_time_limit_s`` (``-o call_time_limit_s=N``); the
reason is a docstring line that starts with ``Slow:`` (docs/testing.md, "Budgets").
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Generator

import pytest

CALL_TIME_LIMIT_S = 90.0
"""How long a test's call phase may take (fixtures' setup and teardown not counted)."""

SLOW_MARK = "Slow:"
"""What a docstring line starts with to give the reason a test takes longer."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``call_time_limit_s``: the seconds a test's call may take without a reason."""
    parser.addini(
        "call_time_limit_s",
        f"seconds a test's call may take unless a docstring line starts with {SLOW_MARK!r}",
        default=str(CALL_TIME_LIMIT_S),
    )


def pytest_configure(config: pytest.Config) -> None:
    """Point ``KTOP_CONFIG_DIR`` at an empty directory unless a test run sets it."""
    os.environ.setdefault("KTOP_CONFIG_DIR", tempfile.mkdtemp(prefix="ktop-config-"))


def slow_reason(doc: str | None) -> str | None:
    """The text after ``Slow:`` on the first docstring line that starts with it (leading
    spaces aside), or None when no line gives a reason."""
    for line in (doc or "").splitlines():
        text = line.strip()
        if text.startswith(SLOW_MARK) and text[len(SLOW_MARK) :].strip():
            return text[len(SLOW_MARK) :].strip()
    return None


def over_time_limit(duration_s: float, limit_s: float, doc: str | None) -> str | None:
    """Why a call that took ``duration_s`` fails the time limit, or None when it is within
    the limit or its docstring gives a ``Slow:`` reason."""
    if duration_s <= limit_s or slow_reason(doc) is not None:
        return None
    return (
        f"the test's call took {duration_s:.1f} s, over the {limit_s:g} s limit: make it "
        f"faster, or say why it is slow on a docstring line starting with {SLOW_MARK!r} "
        "(docs/testing.md, Budgets)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Turn a passed call over the time limit into a failure that says how long it took."""
    report = yield
    if report.when == "call" and report.passed:
        doc = item.function.__doc__ if isinstance(item, pytest.Function) else None
        limit_s = float(item.config.getini("call_time_limit_s"))
        why = over_time_limit(report.duration, limit_s, doc)
        if why is not None:
            report.outcome = "failed"
            report.longrepr = why
    return report
