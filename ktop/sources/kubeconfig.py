"""Finding the kube context to read, with kubectl's merge rules.

``KUBECONFIG`` may list several files (``:``-separated); as in kubectl the
first file that defines a context, cluster or user wins, and the first
``current-context`` that is set wins. Credentials are never copied into
the result: only names and the server URL, which are safe to show.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class KubeconfigError(Exception):
    """The kubeconfig is missing, unreadable, or lacks the requested context."""


@dataclass(frozen=True, slots=True)
class ContextInfo:
    """A resolved context: names and the server, never credentials."""

    name: str
    cluster: str
    user: str
    namespace: str
    server: str
    files: tuple[str, ...]


def kubeconfig_paths(explicit: str | None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The files to read: ``--kubeconfig``, else ``$KUBECONFIG``, else ``~/.kube/config``."""
    env = os.environ if env is None else env
    if explicit:
        return [Path(explicit).expanduser()]
    if env.get("KUBECONFIG"):
        return [Path(p).expanduser() for p in env["KUBECONFIG"].split(os.pathsep) if p]
    return [Path("~/.kube/config").expanduser()]


def yaml_error_summary(exc: yaml.YAMLError) -> str:
    """Where and why YAML parsing failed, without quoting the document.

    PyYAML's own message includes a snippet of the offending line, which in a
    kubeconfig can be a token or a key: only the position and the kind of
    problem are kept, and anything the problem quotes is elided.
    """
    if isinstance(exc, yaml.MarkedYAMLError):
        problem = _QUOTED.sub("'…'", exc.problem or "syntax error")
        mark = exc.problem_mark or exc.context_mark
        if mark is not None:
            return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
        return problem
    return type(exc).__name__


_QUOTED = re.compile(r"'[^']{5,}'|\"[^\"]{5,}\"")


def _load(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise KubeconfigError(f"kubeconfig {path} is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        raise KubeconfigError(
            f"kubeconfig {path} is not valid YAML ({yaml_error_summary(exc)})"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KubeconfigError(f"kubeconfig {path} is not a mapping")
    return data


def _named(items: Any, key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out.setdefault(item["name"], item.get(key) or {})
    return out


def merge(configs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Merge kubeconfigs the way kubectl does (first definition wins)."""
    contexts: dict[str, dict[str, Any]] = {}
    clusters: dict[str, dict[str, Any]] = {}
    users: dict[str, dict[str, Any]] = {}
    current = ""
    for cfg in configs:
        for name, ctx in _named(cfg.get("contexts"), "context").items():
            contexts.setdefault(name, ctx)
        for name, cl in _named(cfg.get("clusters"), "cluster").items():
            clusters.setdefault(name, cl)
        for name, us in _named(cfg.get("users"), "user").items():
            users.setdefault(name, us)
        if not current and cfg.get("current-context"):
            current = str(cfg["current-context"])
    return {"contexts": contexts, "clusters": clusters, "users": users, "current": current}


def resolve_context(
    explicit_file: str | None, context: str | None, env: Mapping[str, str] | None = None
) -> ContextInfo:
    """The context to read, or a :class:`KubeconfigError` that says what is wrong."""
    paths = kubeconfig_paths(explicit_file, env)
    existing = [p for p in paths if p.exists()]
    if not existing:
        raise KubeconfigError(
            "no kubeconfig found (looked at " + ", ".join(str(p) for p in paths) + ")"
        )
    merged = merge([_load(p) for p in existing])
    name = context or merged["current"]
    if not name:
        raise KubeconfigError("no current context is set; pass --context NAME")
    ctx = merged["contexts"].get(name)
    if ctx is None:
        known = ", ".join(sorted(merged["contexts"])) or "none"
        raise KubeconfigError(f"context {name!r} not found in kubeconfig (known: {known})")
    cluster_name = str(ctx.get("cluster", ""))
    cluster = merged["clusters"].get(cluster_name)
    if cluster is None:
        raise KubeconfigError(
            f"context {name!r} names cluster {cluster_name!r}, which is not defined"
        )
    user = str(ctx.get("user", ""))
    if user and user not in merged["users"]:
        raise KubeconfigError(f"context {name!r} names user {user!r}, which is not defined")
    return ContextInfo(
        name=name,
        cluster=cluster_name,
        user=user,
        namespace=str(ctx.get("namespace", "") or "default"),
        server=str(cluster.get("server", "")),
        files=tuple(str(p) for p in existing),
    )
