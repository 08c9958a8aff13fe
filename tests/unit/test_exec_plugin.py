"""The exec credential plugin runner: both streams at once, bounded, timed, checked."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ktop.scrub import Secrets
from ktop.sources.live.exec_plugin import (
    KILL_GRACE_S,
    STDERR_LIMIT,
    ExecPluginError,
    may_interact,
    parse_exec_credential,
    run_exec_plugin,
)

V1 = "client.authentication.k8s.io/v1"


def _plugin(tmp_path: Path, body: str, **extra: Any) -> dict[str, Any]:
    script = tmp_path / "plugin.py"
    script.write_text("import json, os, sys, time\n" + body)
    return {"apiVersion": V1, "command": sys.executable, "args": [str(script)], **extra}


def _cred(status: dict[str, Any]) -> str:
    return json.dumps({"apiVersion": V1, "kind": "ExecCredential", "status": status})


async def test_a_flood_on_stderr_does_not_block_the_credential(tmp_path: Path) -> None:
    # 5 MB on stderr before stdout: read one after the other, the pipe fills and both wait.
    cred_text = _cred({"token": "tok-1"})
    body = f"sys.stderr.write('e' * 5_000_000); sys.stderr.flush(); print({cred_text!r})"
    started = time.monotonic()
    cred = await run_exec_plugin(_plugin(tmp_path, body), timeout_s=20, secrets=Secrets())
    assert cred.token == "tok-1"
    assert time.monotonic() - started < 20


async def test_stderr_kept_is_bounded(tmp_path: Path) -> None:
    body = "sys.stderr.write('x' * 1_000_000 + '\\nlast line\\n'); sys.exit(4)"
    with pytest.raises(ExecPluginError) as info:
        await run_exec_plugin(_plugin(tmp_path, body), timeout_s=20, secrets=Secrets())
    # The last line is beyond the kept prefix: only the kept part can be shown.
    assert "exited with status 4" in str(info.value)
    assert len(str(info.value)) < STDERR_LIMIT


async def test_a_hanging_plugin_is_stopped_and_the_limit_named(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    body = f"open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    started = time.monotonic()
    with pytest.raises(ExecPluginError, match=r"did not answer within 1s \(exec plugin time limit"):
        await run_exec_plugin(_plugin(tmp_path, body), timeout_s=1, secrets=Secrets())
    assert time.monotonic() - started < 10
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


async def test_the_plugin_gets_its_env_and_exec_info(tmp_path: Path) -> None:
    body = (
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        f"print({_cred({'token': 'T'})!r}.replace('\"T\"', json.dumps("
        "os.environ['MY_VAR'] + str(info['spec']['interactive']))))\n"
    )
    plugin = _plugin(tmp_path, body, env=[{"name": "MY_VAR", "value": "v-"}])
    cred = await run_exec_plugin(plugin, timeout_s=20, secrets=Secrets())
    assert cred.token == "v-False"


@pytest.mark.parametrize(
    ("stdout", "words"),
    [
        (b"12345", "JSON int"),
        (b"[1, 2]", "JSON list"),
        (b"\xff\xfe", "not JSON"),
        (
            b'{"kind": "Other", "apiVersion": "' + V1.encode() + b'"}',
            "did not print an ExecCredential",
        ),
        (_cred({}).replace(V1, "v0").encode(), "apiVersion 'v0'"),
        (_cred({}).encode(), "neither a token nor a client certificate"),
        (_cred({"token": 5}).encode(), "status.token is not text"),
        (_cred({"token": "t", "expirationTimestamp": "soon"}).encode(), "not an RFC 3339"),
        (_cred({"token": "t", "expirationTimestamp": 17}).encode(), "not an RFC 3339"),
        (
            json.dumps({"apiVersion": V1, "kind": "ExecCredential", "status": 3}).encode(),
            "no 'status'",
        ),
    ],
)
def test_bad_credentials_are_named(stdout: bytes, words: str) -> None:
    with pytest.raises(ExecPluginError, match=words.replace("(", r"\(")):
        parse_exec_credential(stdout, "plugin", V1, secrets=Secrets())


def test_expiry_without_offset_is_utc() -> None:
    cred = parse_exec_credential(
        _cred({"token": "t", "expirationTimestamp": "2030-01-02T03:04:05"}).encode(),
        "p",
        V1,
        secrets=Secrets(),
    )
    assert cred.expires == datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_interaction_only_when_allowed_and_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Tty())
    assert may_interact({"interactiveMode": "IfAvailable"}, allowed=True)
    assert may_interact({}, allowed=True)
    assert not may_interact({"interactiveMode": "Never"}, allowed=True)
    assert not may_interact({"interactiveMode": "Always"}, allowed=False)
    monkeypatch.setattr("sys.stdin", None)
    assert not may_interact({"interactiveMode": "Always"}, allowed=True)


async def test_stdout_kept_is_bounded_and_the_limit_named(tmp_path: Path) -> None:
    from ktop.sources.live.exec_plugin import STDOUT_LIMIT

    # Twice the limit, then exit 0: the plugin is read to its end (it is not blocked on a
    # full pipe) and refused for the size, not for what the output says.
    body = f"sys.stdout.write('x' * {2 * STDOUT_LIMIT}); sys.stdout.flush()"
    with pytest.raises(ExecPluginError) as err:
        await run_exec_plugin(_plugin(tmp_path, body), timeout_s=20, secrets=Secrets())
    assert f"printed more than {STDOUT_LIMIT} bytes" in str(err.value)
    assert "time limit" not in str(err.value)


def _shell_plugin(tmp_path: Path, body: str) -> dict[str, Any]:
    script = tmp_path / "plugin.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return {"apiVersion": V1, "command": str(script), "interactiveMode": "Never"}


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return ") Z" not in stat.read_text()
    except OSError:
        return False


async def test_a_shell_plugin_whose_child_holds_the_pipes_is_stopped_with_its_child(
    tmp_path: Path,
) -> None:
    # The shell waits on `sleep`, which holds stdout and stderr: killing the shell alone
    # leaves the pipes open and asyncio's wait() never returns (ktop hung here).
    pid_file = tmp_path / "child"
    plugin = _shell_plugin(tmp_path, f'sleep 3600 & echo $! > "{pid_file}"\nwait\n')
    started = time.monotonic()
    with pytest.raises(ExecPluginError, match=r"'plugin.sh' did not answer within 1s"):
        await run_exec_plugin(plugin, timeout_s=1, secrets=Secrets())
    assert time.monotonic() - started < 1 + KILL_GRACE_S + 3
    assert not _alive(int(pid_file.read_text()))


async def test_a_child_that_leaves_the_process_group_cannot_hold_ktop(tmp_path: Path) -> None:
    # setsid: the child is out of reach of the group kill and keeps the pipes open;
    # ktop still returns within the limit and its grace, closing the pipes itself.
    pid_file = tmp_path / "child"
    body = f"setsid sh -c 'echo $$ > \"{pid_file}\"; exec sleep 30' &\nwait\n"
    started = time.monotonic()
    try:
        with pytest.raises(ExecPluginError, match="did not answer within 1s"):
            await run_exec_plugin(_shell_plugin(tmp_path, body), timeout_s=1, secrets=Secrets())
        assert time.monotonic() - started < 1 + KILL_GRACE_S + 3
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), 9)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("yes credential\n", id="endless stdout"),
        pytest.param("yes warning >&2\n", id="endless stderr"),
        pytest.param("sleep 2\necho late\n", id="answers after the limit"),
    ],
)
async def test_floods_and_slow_answers_end_at_the_limit(tmp_path: Path, body: str) -> None:
    started = time.monotonic()
    with pytest.raises(ExecPluginError, match=r"did not answer within 1s \(exec plugin time limit"):
        await run_exec_plugin(_shell_plugin(tmp_path, body), timeout_s=1, secrets=Secrets())
    assert time.monotonic() - started < 1 + KILL_GRACE_S + 3


async def test_a_plugin_waiting_for_input_reads_end_of_file_at_once(tmp_path: Path) -> None:
    # Not interactive: its stdin is /dev/null, so `read` ends at once and the plugin's
    # empty answer is refused without waiting for the limit.
    started = time.monotonic()
    with pytest.raises(ExecPluginError) as err:
        await run_exec_plugin(
            _shell_plugin(tmp_path, "read answer\n"), timeout_s=20, secrets=Secrets()
        )
    assert "time limit" not in str(err.value)
    assert time.monotonic() - started < 10
