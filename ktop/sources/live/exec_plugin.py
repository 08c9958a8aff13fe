"""Running an exec credential plugin, with a time limit and bounded output.

kubernetes-asyncio's own runner reads the plugin's standard output to the
end before its standard error (a plugin that fills the stderr pipe blocks
forever), has no time limit, and fails with a ``TypeError`` when the output
is JSON but not an object. This runner reads both streams at once, keeps at
most :data:`STDERR_LIMIT` bytes of standard error and :data:`STDOUT_LIMIT`
of standard output, kills the plugin after ``timeout_s`` seconds, and
checks the ``ExecCredential`` it prints field by field.

Messages never contain the plugin's standard output (it holds the
credential). Its standard error is shown only after
:meth:`~ktop.scrub.Secrets.scrub_opaque` has masked anything token-like. The token or key
a plugin prints is recorded into the session's :class:`~ktop.scrub.Secrets` as soon as it
is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ktop.scrub import Secrets
from ktop.structured import InputRefusedError, load_json

EXEC_TIMEOUT_S = 30.0
"""How long a credential plugin may take (cloud CLIs can be slow on a cold cache)."""
INTERACTIVE_TIMEOUT_S = 120.0
"""How long a plugin that talks to the user (a prompt, a browser login) may take."""
STDOUT_LIMIT = 1 << 20
STDERR_LIMIT = 4096


class ExecPluginError(Exception):
    """The plugin failed, timed out, or printed something that is not an ExecCredential."""


@dataclass(frozen=True, slots=True)
class ExecCredential:
    """What a plugin returned: a token or a client certificate, and when it expires."""

    token: str | None
    client_certificate_data: str | None
    client_key_data: str | None
    expires: datetime | None


@dataclass(frozen=True, slots=True)
class CommandOutput:
    """What a bounded command gave: its status, its output (bounded) and its errors."""

    code: int
    stdout: bytes
    stdout_truncated: bool
    stderr: bytes


async def _drain(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, bool]:
    """Read a stream to its end, keeping at most ``limit`` bytes (the rest is discarded)."""
    if stream is None:
        return b"", False
    kept = bytearray()
    truncated = False
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return bytes(kept), truncated
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        if len(chunk) > max(room, 0):
            truncated = True


PLUGIN = "credential plugin"  # how messages name the command (a token command: itself)


async def run_bounded(
    argv: Sequence[str],
    env: Mapping[str, str],
    timeout_s: float,
    interactive: bool,
    what: str = PLUGIN,
) -> CommandOutput:
    """Run ``argv`` within ``timeout_s`` (stopped with everything it started past it),
    keeping at most :data:`STDOUT_LIMIT` and :data:`STDERR_LIMIT` bytes of its output;
    :class:`ExecPluginError` when it cannot start or does not finish in time.
    """
    name = os.path.basename(argv[0])
    try:
        # An interactive plugin talks to the user on the terminal, as under kubectl;
        # otherwise it gets no input and its errors are captured (bounded).
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env=dict(env),
            stdin=None if interactive else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=None if interactive else asyncio.subprocess.PIPE,
            # Its own process group, so that a shell script's children (``sleep``, a
            # cloud CLI) are stopped with it and release the pipes.
            start_new_session=not interactive,
        )
    except OSError as exc:
        raise ExecPluginError(
            f"{what} {name!r} could not be started: {exc.strerror or exc}"
        ) from None
    finished = False
    try:
        async with asyncio.timeout(timeout_s):
            (out, truncated), (err, _) = await asyncio.gather(
                _drain(proc.stdout, STDOUT_LIMIT), _drain(proc.stderr, STDERR_LIMIT)
            )
            code = await proc.wait()
            finished = True
    except TimeoutError:
        raise ExecPluginError(
            f"{what} {name!r} did not answer within {timeout_s:g}s "
            f"({'interactive ' if interactive else ''}exec plugin time limit); it was stopped"
        ) from None
    finally:
        if not finished:
            await _stop(proc, group=not interactive)
    return CommandOutput(code, out, truncated, err)


KILL_GRACE_S = 2.0
"""How long a killed plugin's pipes may stay open before ktop closes them itself."""


async def _stop(proc: asyncio.subprocess.Process, group: bool) -> None:
    """Kill the plugin and everything it started, and never wait on it for long.

    asyncio's ``wait()`` returns only once every pipe is closed, and a grandchild that
    left the plugin's process group (or a plugin killed without its group) may hold them
    open for as long as it likes: after :data:`KILL_GRACE_S` the pipes are closed here.
    """
    if group:  # the plugin leads its own session: its pid is the group's id
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    try:
        await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
    except (TimeoutError, Exception):
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()


def exec_info(api_version: str, interactive: bool) -> str:
    """The ``KUBERNETES_EXEC_INFO`` a plugin receives."""
    return json.dumps(
        {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": interactive}}
    )


def may_interact(plugin: Mapping[str, Any], allowed: bool) -> bool:
    """Whether the plugin may talk to the user: its ``interactiveMode`` allows it (absent
    means ``IfAvailable``, as kubectl reads it), the caller allows it, and stdin is a
    terminal.
    """
    mode = plugin.get("interactiveMode") or "IfAvailable"
    if not allowed or mode == "Never":
        return False
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


async def run_exec_plugin(
    plugin: Mapping[str, Any],
    timeout_s: float = EXEC_TIMEOUT_S,
    *,
    allow_interaction: bool = False,
    secrets: Secrets,
) -> ExecCredential:
    """Run the plugin of a kubeconfig ``user.exec`` entry and read its ExecCredential.

    ``allow_interaction``: the terminal is free (before the dashboard starts), so a plugin
    whose ``interactiveMode`` allows it may prompt, within :data:`INTERACTIVE_TIMEOUT_S`.
    The credential it prints is recorded into ``secrets`` (the session's), and its
    standard error is scrubbed with them.
    """
    command = str(plugin.get("command", ""))
    api_version = str(plugin.get("apiVersion", ""))
    args = [str(a) for a in plugin.get("args") or []]
    env = dict(os.environ)
    for item in plugin.get("env") or []:
        env[str(item["name"])] = str(item["value"])
    interactive = may_interact(plugin, allow_interaction)
    env["KUBERNETES_EXEC_INFO"] = exec_info(api_version, interactive)
    name = os.path.basename(command)
    limit = max(timeout_s, INTERACTIVE_TIMEOUT_S) if interactive else timeout_s
    out = await run_bounded([command, *args], env, limit, interactive)
    if out.code != 0:
        detail = stderr_line(out.stderr, secrets)
        raise ExecPluginError(
            f"credential plugin {name!r} exited with status {out.code}"
            + (f": {detail}" if detail else "")
        )
    if out.stdout_truncated:
        raise ExecPluginError(
            f"credential plugin {name!r} printed more than {STDOUT_LIMIT} bytes; "
            "that is not an ExecCredential"
        )
    return parse_exec_credential(out.stdout, name, api_version, secrets)


def stderr_line(stderr: bytes, secrets: Secrets) -> str:
    """The last non-empty line of a plugin's stderr, token-like words masked."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    if not lines:
        return ""
    return secrets.scrub_opaque(lines[-1])[:300]


def parse_exec_credential(
    stdout: bytes, name: str, api_version: str, secrets: Secrets, what: str = PLUGIN
) -> ExecCredential:
    """An ExecCredential from a plugin's output; ExecPluginError saying what is wrong.

    The output itself is never quoted (it is, or holds, the credential); the token and key
    it holds are recorded into ``secrets`` before it is checked.
    """
    try:
        data = load_json(stdout, "")
    except InputRefusedError as exc:  # its words never quote the output (the credential)
        raise ExecPluginError(
            f"{what} {name!r} printed {len(stdout)} bytes that are not JSON "
            f"ktop reads:{str(exc).removeprefix(':')}"
        ) from None
    if not isinstance(data, dict):
        raise ExecPluginError(
            f"{what} {name!r} printed a JSON {type(data).__name__}, not an ExecCredential object"
        )
    status = data.get("status")
    if isinstance(status, dict):
        for secret_field in ("token", "clientKeyData"):
            secrets.add(status.get(secret_field))
    if data.get("kind") != "ExecCredential":
        raise ExecPluginError(f"{what} {name!r} did not print an ExecCredential")
    if data.get("apiVersion") != api_version:
        raise ExecPluginError(
            f"{what} {name!r} answered with apiVersion "
            f"{str(data.get('apiVersion'))[:80]!r}, not {api_version!r}"
        )
    if not isinstance(status, dict):
        raise ExecPluginError(f"{what} {name!r} printed no 'status' object")
    token = status.get("token")
    cert = status.get("clientCertificateData")
    key = status.get("clientKeyData")
    for field_name, value in (
        ("token", token),
        ("clientCertificateData", cert),
        ("clientKeyData", key),
    ):
        if value is not None and not isinstance(value, str):
            raise ExecPluginError(f"{what} {name!r}: status.{field_name} is not text")
    if not token and not (cert and key):
        raise ExecPluginError(
            f"{what} {name!r} returned neither a token nor a client certificate and key"
        )
    return ExecCredential(
        token or None,
        cert or None,
        key or None,
        _expiry(status.get("expirationTimestamp"), name, what),
    )


def _expiry(value: object, name: str, what: str) -> datetime | None:
    """The expiry as an aware UTC time (a time without an offset is UTC)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ExecPluginError(f"{what} {name!r}: expirationTimestamp is not an RFC 3339 time")
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ExecPluginError(
            f"{what} {name!r}: expirationTimestamp is not an RFC 3339 time"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
