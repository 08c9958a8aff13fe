"""How to reach Prometheus, as options: defined once here (flag, default, help), and from
them the command line, ``config.toml``'s keys, the live options' list and the client's
:class:`~ktop.sources.live.prometheus_connect.PrometheusAuth`.

Managed and global stores each need one more thing than a URL: Google's and Azure's a
token that is refreshed (``--prometheus-token-command``), Amazon's requests signed with
SigV4 (``--prometheus-sigv4``), Mimir's and Cortex's a tenant header
(``--prometheus-header``), VictoriaMetrics' a query lag (``--prometheus-offset``).
docs/providers.md shows each.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ktop import bounds
from ktop.bounds import bounded_float
from ktop.sources.live.prometheus_connect import HEADER_EXPECTED, PrometheusAuth, split_header


class AddsArguments(Protocol):
    """An argument group (anything with argparse's ``add_argument``)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        """Argparse's ``add_argument``."""


def _header(text: str) -> str:
    """An argparse ``type=`` for ``--prometheus-header NAME:VALUE``."""
    if split_header(text) is None:
        raise argparse.ArgumentTypeError(f"expected {HEADER_EXPECTED}")
    return text


def _command(text: str) -> str:
    """An argparse ``type=`` for ``--prometheus-token-command``: words as a shell splits
    them (no shell runs it).
    """
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split into words: {exc}") from None
    if not words:
        raise argparse.ArgumentTypeError("expected a command")
    return text


@dataclass(frozen=True, slots=True)
class PrometheusFlag:
    """One option: its flag, its default, and how argparse reads it."""

    flag: str
    default: Any
    metavar: str | None
    help: str
    type: Callable[[str], Any] | None = None
    append: bool = False
    switch: bool = False

    @property
    def dest(self) -> str:
        """The attribute (and ``config.toml`` key, with dashes) it sets."""
        return self.flag.removeprefix("--").replace("-", "_")


PROMETHEUS_FLAGS: tuple[PrometheusFlag, ...] = (
    PrometheusFlag(
        "--prometheus-token-file",
        None,
        "FILE",
        "bearer token for Prometheus, read before every request (projected tokens rotate)",
    ),
    PrometheusFlag(
        "--prometheus-token-command",
        None,
        "CMD",
        "a command that prints a bearer token for Prometheus (e.g. 'gcloud auth "
        "print-access-token'), or an ExecCredential as a kubeconfig exec plugin does; run "
        "without a shell, within a time limit, its token reused until shortly before it "
        "expires and asked again after a 401 or 403 (docs/providers.md)",
        type=_command,
    ),
    PrometheusFlag(
        "--prometheus-header",
        [],
        "NAME:VALUE",
        "a header sent with every Prometheus request (repeat), e.g. 'X-Scope-OrgID: "
        "tenant-a' for Mimir, Cortex or a Thanos tenancy",
        type=_header,
        append=True,
    ),
    PrometheusFlag(
        "--prometheus-offset",
        0.0,
        "SECONDS",
        "read Prometheus this many seconds in the past, for stores whose newest samples "
        f"lag (VictoriaMetrics: about 30), {bounds.PROMETHEUS_OFFSET.text()} (default 0)",
        type=bounded_float(bounds.PROMETHEUS_OFFSET),
    ),
    PrometheusFlag(
        "--prometheus-sigv4",
        False,
        None,
        "sign Prometheus requests with AWS SigV4 (Amazon Managed Service for Prometheus), "
        "with the AWS credential chain (environment, profile, SSO, instance or pod role); "
        "needs pip install 'ktop-tui[aws]'",
        switch=True,
    ),
    PrometheusFlag(
        "--prometheus-sigv4-region",
        None,
        "REGION",
        "the region SigV4 signs for (default: the workspace URL's "
        "aps-workspaces.REGION.amazonaws.com, else AWS_REGION or the profile's)",
    ),
    PrometheusFlag(
        "--prometheus-user", None, "USER", "basic-auth user for Prometheus (not with a token)"
    ),
    PrometheusFlag("--prometheus-password-file", None, "FILE", "its password"),
    PrometheusFlag("--prometheus-ca", None, "FILE", "CA bundle for Prometheus"),
    PrometheusFlag("--prometheus-cert", None, "FILE", "client certificate for Prometheus"),
    PrometheusFlag("--prometheus-key", None, "FILE", "client key for Prometheus"),
    PrometheusFlag(
        "--prometheus-insecure", False, None, "skip TLS verification of Prometheus", switch=True
    ),
)
"""Every option that says how to reach Prometheus (``--prometheus`` itself says where)."""

PROMETHEUS_DEFAULTS: dict[str, Any] = {f.dest: f.default for f in PROMETHEUS_FLAGS}
"""Each option's built-in default, by destination."""


def add_prometheus_flags(g: AddsArguments, default: Any) -> None:
    """Every Prometheus option on ``g``, with ``default`` (the common options' SUPPRESS)."""
    for f in PROMETHEUS_FLAGS:
        kwargs: dict[str, Any] = {"default": default, "help": f.help}
        if f.switch:
            kwargs["action"] = "store_true"
        else:
            kwargs["metavar"] = f.metavar
            if f.append:
                kwargs["action"] = "append"
            if f.type is not None:
                kwargs["type"] = f.type
        g.add_argument(f.flag, **kwargs)


def prometheus_auth(args: argparse.Namespace) -> PrometheusAuth:
    """The client's settings from the resolved options."""

    def opt(name: str) -> Any:
        return getattr(args, name, PROMETHEUS_DEFAULTS[name])

    command = opt("prometheus_token_command")
    return PrometheusAuth(
        bearer_token_file=opt("prometheus_token_file"),
        token_command=tuple(shlex.split(command)) if command else (),
        headers=tuple(opt("prometheus_header") or ()),
        offset_s=float(opt("prometheus_offset") or 0.0),
        sigv4=bool(opt("prometheus_sigv4")),
        sigv4_region=opt("prometheus_sigv4_region"),
        username=opt("prometheus_user"),
        password_file=opt("prometheus_password_file"),
        ca=opt("prometheus_ca"),
        cert=opt("prometheus_cert"),
        key=opt("prometheus_key"),
        insecure=bool(opt("prometheus_insecure")),
    )
