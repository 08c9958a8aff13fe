"""A bearer token for Prometheus from a command (``--prometheus-token-command``), run as a
kubeconfig exec plugin is run (:func:`~ktop.sources.live.exec_plugin.run_bounded`): no
shell, no input, a time limit, bounded output, its errors scrubbed.

Managed stores take short-lived tokens: Google Cloud Monitoring an OAuth access token
(``gcloud auth print-access-token``, about an hour), Azure Monitor an Entra ID token
(``az account get-access-token ... --query accessToken -o tsv``). The command prints the
token alone, or an ExecCredential (``client.authentication.k8s.io``) whose
``expirationTimestamp`` says when it expires. The token is reused until
:data:`REFRESH_BEFORE_S` before that expiry (a plain token: for
:data:`PLAIN_TOKEN_REUSE_S`), and asked for again at the next request after Prometheus
refuses it (401 or 403), so a token revoked or expired early costs one failed poll.
The token is recorded into the session's secrets as soon as it is read; it is never
printed.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from ktop.scrub import Secrets
from ktop.sources.live.exec_plugin import (
    EXEC_TIMEOUT_S,
    ExecPluginError,
    parse_exec_credential,
    run_bounded,
    stderr_line,
)
from ktop.structured import InputRefusedError, load_json

OPTION = "--prometheus-token-command"
PLAIN_TOKEN_REUSE_S = 300.0
"""How long a token printed alone is reused: well inside a cloud CLI token's hour."""
REFRESH_BEFORE_S = 60.0
"""A token whose expiry is known is asked for again this long before it (or halfway to
it, for a token that lives shorter than twice this)."""
API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
"""The ExecCredential versions a token command may print."""
MAX_TOKEN_CHARS = 16384

T = TypeVar("T")


class TokenCommandError(Exception):
    """The token command failed, timed out, or printed no usable token."""


def _blocking(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end from blocking code: in this thread when it runs no event
    loop (a request's worker thread), else in a thread of its own.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="ktop-token-command", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


class TokenCommand:
    """The ``Authorization`` header from a command's token, cached (thread-safe)."""

    def __init__(
        self,
        argv: Sequence[str],
        secrets: Secrets,
        *,
        timeout_s: float = EXEC_TIMEOUT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not argv:
            raise TokenCommandError(f"{OPTION}: no command given")
        self.argv = tuple(argv)
        self.name = os.path.basename(self.argv[0])
        self.secrets = secrets
        self.timeout_s = timeout_s
        self.clock = clock
        self.runs = 0
        """How often the command ran (the tests and the cost of a session)."""
        self._lock = threading.Lock()
        self._token = ""
        self._good_until = 0.0

    def header(self) -> str:
        """``Bearer TOKEN``: the cached token while it is good, else a new one."""
        with self._lock:
            if not self._token or self.clock() >= self._good_until:
                self._token, self._good_until = self._fetch()
            return "Bearer " + self._token

    def refused(self) -> None:
        """Prometheus refused the token (401 or 403): the next request asks for a new one."""
        with self._lock:
            self._good_until = 0.0

    def _fetch(self) -> tuple[str, float]:
        self.runs += 1
        started = self.clock()
        try:
            out = _blocking(
                lambda: run_bounded(self.argv, os.environ, self.timeout_s, False, OPTION)
            )
        except ExecPluginError as exc:
            raise TokenCommandError(str(exc)) from None
        if out.code != 0:
            detail = stderr_line(out.stderr, self.secrets)
            raise TokenCommandError(
                f"{OPTION} {self.name!r} exited with status {out.code}"
                + (f": {detail}" if detail else "")
            )
        if out.stdout_truncated:
            raise TokenCommandError(f"{OPTION} {self.name!r} printed too much to be a token")
        return self._token_of(out.stdout.strip(), started)

    def _token_of(self, printed: bytes, started: float) -> tuple[str, float]:
        """The token and until when to reuse it, from what the command printed."""
        if printed.startswith(b"{"):
            return self._credential(printed, started)
        text = printed.decode("utf-8", "replace")
        self.secrets.add(text)
        if not text or len(text) > MAX_TOKEN_CHARS or any(c.isspace() for c in text):
            raise TokenCommandError(
                f"{OPTION} {self.name!r} printed {len(printed)} bytes that are not one token "
                "(expected the token alone, or an ExecCredential)"
            )
        return text, started + PLAIN_TOKEN_REUSE_S

    def _credential(self, printed: bytes, started: float) -> tuple[str, float]:
        try:
            data = load_json(printed, "")
        except InputRefusedError:
            data = None
        version = data.get("apiVersion") if isinstance(data, dict) else None
        api_version = version if version in API_VERSIONS else API_VERSIONS[0]
        try:
            cred = parse_exec_credential(printed, self.name, str(api_version), self.secrets, OPTION)
        except ExecPluginError as exc:
            raise TokenCommandError(str(exc)) from None
        if not cred.token:
            raise TokenCommandError(f"{OPTION} {self.name!r} printed no token (status.token)")
        if cred.expires is None:
            return cred.token, started + PLAIN_TOKEN_REUSE_S
        expires = cred.expires.timestamp()
        life = expires - started
        return cred.token, expires - min(REFRESH_BEFORE_S, max(life, 0.0) / 2)
