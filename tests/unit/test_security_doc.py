"""docs/security.md states the limits the code enforces (checked against the code, so the
page cannot drift)."""

from __future__ import annotations

from pathlib import Path

from ktop import bounds
from ktop.model import apf_dump, exposition, failed_scheduling
from ktop.sources.live import body, client, exec_plugin, transport

DOC = (Path(__file__).parent.parent.parent / "docs" / "security.md").read_text()


def _row(first_cell: str) -> str:
    rows = [ln.strip() for ln in DOC.splitlines() if ln.strip().startswith(f"| {first_cell} |")]
    assert len(rows) == 1, first_cell
    return rows[0]


def test_every_bounded_option_is_in_the_table_with_its_bounds() -> None:
    for bound in bounds.ALL:
        rows = [ln for ln in DOC.splitlines() if ln.strip().startswith(f"| `{bound.option}`")]
        # An option two commands spell alike: the row that names the bound's command, or
        # (for the bound without one) the row that names none of the others'.
        others = {b.command for b in bounds.ALL if b.option == bound.option and b is not bound} - {
            ""
        }
        if bound.command:
            rows = [r for r in rows if f"(`ktop {bound.command}`)" in r]
        rows = [r for r in rows if not any(f"(`ktop {c}`)" in r for c in others)]
        assert len(rows) == 1, (bound.option, bound.command)
        assert bound.text() in rows[0]


def test_replay_speed_bounds_are_the_speeds_replay_steps_through() -> None:
    from ktop.sources.replay import SPEEDS

    assert (bounds.REPLAY_SPEED.low, bounds.REPLAY_SPEED.high) == (SPEEDS[0], SPEEDS[-1])


def test_time_limits_match_the_code() -> None:
    assert f"{exec_plugin.EXEC_TIMEOUT_S:g} s" in _row("exec credential plugin")
    assert f"{exec_plugin.STDERR_LIMIT // 1024} KiB" in _row("exec credential plugin")
    assert f"{client.PROBE_TIMEOUT_S:g} s" in _row(
        "first request (`/version`), connection included"
    )
    assert f"{transport.CONNECT_TIMEOUT_S:g} s" in _row(
        "connection set-up (TCP, TLS, proxy) of any request"
    )
    assert f"{transport.REQUEST_TIMEOUT_S:g} s" in _row("any other request")
    assert f"{transport.WATCH_READ_TIMEOUT_S:g} s" in _row(
        "a watch that sends nothing, not even a bookmark"
    )


def test_parser_caps_match_the_code() -> None:
    assert f"a body over {body.MAX_BODY_BYTES >> 20} MiB" in DOC
    assert f"over {exposition.MAX_LINE_CHARS // 1024} KiB" in DOC
    assert f"value over {exposition.MAX_LABEL_VALUE_CHARS // 1024} KiB" in DOC
    assert f"row over {apf_dump.MAX_LINE_CHARS // 1024} KiB" in DOC
    assert f"up to {failed_scheduling.MAX_MESSAGE_CHARS // 1024} KiB" in DOC
    assert f"at most {exposition.MAX_ERRORS} malformed lines" in DOC


def test_the_file_limits_prose_states_the_code_s() -> None:
    """The table is a generated block (``make docs``; tests/unit/test_docgen.py checks it)."""
    from ktop import files

    assert f"within {files.PIPE_TIMEOUT_S:g} s" in DOC
    assert f"at most {exec_plugin.KILL_GRACE_S:g} s for the pipes" in DOC
