"""Options several commands share, defined once: the simulated cluster's size and seed, and
the look-back of a one-shot.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ktop import bounds
from ktop.bounds import bounded_float, bounded_int
from ktop.model.text import fmt_duration

DEFAULT_NODES = 5000
DEFAULT_ZONES = 3
DEFAULT_SEED = 1
DEFAULT_LOOK_BACK_S = 900.0
"""How far back a one-shot (``ktop triage``, ``ktop snapshot`` of a live cluster) judges
the recent past: the etcd mixin's leader-change alert counts over 15 minutes."""


def simulator_options(
    p: argparse.ArgumentParser, *, when: str = "", nodes: int = DEFAULT_NODES
) -> None:
    """``--nodes``, ``--zones`` and ``--seed`` of the built-in simulated cluster.

    ``when`` says when they apply (``"with --demo"``) for commands that also read live
    clusters; ``nodes`` is the default node count (``fleet --demo`` runs several).
    """
    note = f"{when}: " if when else ""
    p.add_argument(
        "--nodes",
        type=bounded_int(bounds.NODES),
        default=nodes,
        help=f"{note}simulated nodes, {bounds.NODES.text()} (default {nodes})",
    )
    p.add_argument(
        "--zones",
        type=bounded_int(bounds.ZONES),
        default=DEFAULT_ZONES,
        help=f"{note}simulated zones, {bounds.ZONES.text()} (default {DEFAULT_ZONES})",
    )
    p.add_argument(
        "--seed",
        type=bounded_int(bounds.SEED),
        default=DEFAULT_SEED,
        help=f"{note}simulator random seed, {bounds.SEED.text()} (default {DEFAULT_SEED})",
    )


def look_back_option(p: argparse.ArgumentParser) -> None:
    """``--look-back``: how much of the recent past a one-shot of a live cluster (or a
    bundle: before its capture) judges (docs/triage.md, "What a one-shot looks at"). Its
    default is None, so that a command can tell it was not given; :func:`look_back_s`
    resolves it.
    """
    p.add_argument(
        "--look-back",
        type=bounded_float(bounds.LOOK_BACK),
        default=None,
        metavar="DURATION",
        help=(
            "how much of the recent past to judge: Prometheus' range over it with "
            "--prometheus, else the components' counters since each process started within "
            f"it; {bounds.LOOK_BACK.text()}, or 15m, 1h (default {DEFAULT_LOOK_BACK_S / 60:g}m)"
        ),
    )


def look_back_s(args: argparse.Namespace) -> float:
    """The look-back asked for, or :data:`DEFAULT_LOOK_BACK_S`."""
    given: float | None = getattr(args, "look_back", None)
    return DEFAULT_LOOK_BACK_S if given is None else given


def look_back_words(source: Mapping[str, Any]) -> str:
    """The look-back as a report states it, from a source's ``look_back_s`` and
    ``look_back_from`` (docs/triage-json.md); empty when it has none (a recording).
    """
    seconds = source.get("look_back_s")
    if not isinstance(seconds, int | float):
        return ""
    return f"the last {fmt_duration(seconds)}, judged from {source.get('look_back_from', '?')}"


def provider_name(text: str) -> str:
    """An argparse ``type=`` for ``--provider`` (and ``provider`` in config.toml): one of
    :class:`~ktop.model.providers.Provider`'s values.
    """
    from ktop.model.providers import Provider

    names = [p.value for p in Provider]
    if text not in names:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: expected one of {', '.join(names)}")
    return text


def url(text: str) -> str:
    """An argparse ``type=`` for an http(s) URL to read (``--apiserver``, the component
    URLs): a scheme, a host, a port from 1 to 65535, no whitespace or control characters.
    The message never repeats the URL's user information.
    """
    from ktop.sources.live.addresses import URL_EXPECTED, shown, url_problem

    problem = url_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{shown(text)}: expected {URL_EXPECTED}; {problem}")
    return text


def prometheus_address(text: str) -> str:
    """An argparse ``type=`` for ``--prometheus``: ``auto``, ``k8s://NAMESPACE/SERVICE:PORT``
    or an http(s) URL (:func:`url`).
    """
    from ktop.sources.live.addresses import (
        K8S_EXPECTED,
        K8S_SCHEME,
        PROMETHEUS_AUTO,
        URL_EXPECTED,
        shown,
        split_k8s_address,
        url_problem,
    )

    if text == PROMETHEUS_AUTO:
        return text
    if text.startswith(K8S_SCHEME):
        if split_k8s_address(text) is None:
            raise argparse.ArgumentTypeError(f"{shown(text)}: expected {K8S_EXPECTED}")
        return text
    problem = url_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(
            f"{shown(text)}: expected {URL_EXPECTED}, {K8S_SCHEME}NAMESPACE/SERVICE:PORT or "
            f"{PROMETHEUS_AUTO!r}; {problem}"
        )
    return text


def directory(text: str) -> str:
    """An argparse ``type=`` for a directory's name: not empty, not only spaces."""
    if not str(text).strip():
        raise argparse.ArgumentTypeError(f"expected a directory, got {text!r}")
    return text


def moment(text: str) -> float:
    """A moment: RFC 3339 (``2026-12-07T03:05:00Z``; without a zone, UTC) or Unix seconds."""
    t = text.strip()
    try:
        value = float(t)
    except ValueError:
        try:
            when = datetime.fromisoformat(t)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not a time: {t[:40]!r} (RFC 3339, e.g. 2026-12-07T03:05:00Z, or Unix seconds)"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.timestamp()
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a time: {t[:40]!r}")
    return value
