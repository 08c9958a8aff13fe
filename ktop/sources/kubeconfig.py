"""Finding the kube context to read, with kubectl's merge rules.

``KUBECONFIG`` may list several files (``:``-separated); as in kubectl the
first file that defines a context, cluster or user wins, and the first
``current-context`` that is set wins. Credentials are never copied into
the result: only names and the server URL, which are safe to show; every
credential a file holds is recorded, as the file is read, into the session's
:class:`~ktop.scrub.Secrets` the caller gives.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ktop.files import (
    CERTIFICATE,
    KUBECONFIG,
    TOKEN,
    FileRefusedError,
    check_regular,
    has_control_character,
    read_bounded,
    read_secret_file,
)
from ktop.scrub import Secrets


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
    defined_in: tuple[str, ...] = ()
    """The files that define the context, its cluster and its user (each named once):
    what a later error about them names."""


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


MAX_KUBECONFIG_BYTES = KUBECONFIG.max_bytes
"""A kubeconfig larger than this is refused (real ones are kilobytes)."""
_LISTS = ("contexts", "clusters", "users")
_FILE_FIELDS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}
_BASE64_FIELDS = {
    "cluster": ("certificate-authority-data",),
    "user": ("client-certificate-data", "client-key-data"),
}
_SECRET_USER_KEYS = (
    "token",
    "password",
    "client-key-data",
    "client-certificate-data",
)
_SECRET_WORDS = re.compile(r"token|secret|passw|key|credential|auth|session", re.IGNORECASE)
_TOKENISH = re.compile(r"^(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9+/_=.~:-]{16,}$")


def _load(path: Path, secrets: Secrets) -> dict[str, Any]:
    """Read one kubeconfig file, once (it may be a pipe), and check its shape; record its
    credentials into ``secrets``.
    """
    try:
        raw = read_bounded(path, KUBECONFIG, allow_pipe=True)
    except FileRefusedError as exc:
        raise KubeconfigError(str(exc)) from None
    except OSError as exc:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise KubeconfigError(f"kubeconfig {path} is not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KubeconfigError(
            f"kubeconfig {path} is not valid YAML ({yaml_error_summary(exc)})"
        ) from None
    except RecursionError:
        raise KubeconfigError(f"kubeconfig {path} is nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KubeconfigError(f"kubeconfig {path} is not a mapping")
    for key in _LISTS:
        items = data.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise KubeconfigError(f"kubeconfig {path}: '{key}' is {_kind(items)}, not a list")
        for index, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise KubeconfigError(
                    f"kubeconfig {path}: entry {index + 1} of '{key}' is not a mapping "
                    "with a 'name'"
                )
    _record_credentials(data, secrets)
    return _absolute_paths(data, path)


def _kind(value: object) -> str:
    return {
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
        dict: "a mapping",
    }.get(type(value), f"a {type(value).__name__}")


def _record_credentials(data: dict[str, Any], secrets: Secrets) -> None:
    """Record every credential the file holds into ``secrets``, before anything can echo
    one.
    """
    for item in data.get("users") or []:
        user = item.get("user") if isinstance(item, dict) else None
        if not isinstance(user, dict):
            continue
        secrets.add_all(user.get(k) for k in _SECRET_USER_KEYS)
        provider = user.get("auth-provider")
        if isinstance(provider, dict) and isinstance(provider.get("config"), dict):
            secrets.add_all(provider["config"].values())
        plugin = user.get("exec")
        if isinstance(plugin, dict):
            _record_exec(plugin, secrets)


def _record_exec(plugin: dict[str, Any], secrets: Secrets) -> None:
    for env in plugin.get("env") or []:
        if isinstance(env, dict):
            value = env.get("value")
            if _SECRET_WORDS.search(str(env.get("name", ""))) or _looks_like_token(value):
                secrets.add(value)
    args = plugin.get("args") or []
    if not isinstance(args, list):
        return
    previous = ""
    for arg in args:
        text = str(arg)
        flag, eq, value = text.partition("=")
        if eq and _SECRET_WORDS.search(flag):
            secrets.add(value)
        elif (_SECRET_WORDS.search(previous) and previous.startswith("-")) or _looks_like_token(
            text
        ):
            secrets.add(text)
        previous = text


def _looks_like_token(value: object) -> bool:
    return isinstance(value, str) and bool(_TOKENISH.match(value)) and "/" not in value[:1]


def _absolute_paths(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """Relative file names in a kubeconfig are relative to that file, as in kubectl."""
    base = path.parent
    for key, inner in (("clusters", "cluster"), ("users", "user")):
        for item in data.get(key) or []:
            entry = item.get(inner)
            if not isinstance(entry, dict):
                continue
            for name in _FILE_FIELDS[inner]:
                value = entry.get(name)
                if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
                    entry[name] = str(base / value)
            plugin = entry.get("exec") if inner == "user" else None
            if isinstance(plugin, dict):
                command = plugin.get("command")
                if isinstance(command, str) and "/" in command and not command.startswith("/"):
                    plugin["command"] = str(base / command)
    return data


def _named(items: Any, key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out.setdefault(item["name"], item.get(key) or {})
    return out


def merge(configs: Sequence[dict[str, Any]], paths: Sequence[Path] = ()) -> dict[str, Any]:
    """Merge kubeconfigs the way kubectl does (first definition wins).

    With the ``paths`` the configs were read from, ``origin`` says which file each
    context, cluster and user came from (``origin["users"]["admin"]``).
    """
    merged: dict[str, Any] = {"contexts": {}, "clusters": {}, "users": {}, "current": ""}
    origin: dict[str, dict[str, str]] = {key: {} for key in _LISTS}
    for i, cfg in enumerate(configs):
        where = str(paths[i]) if i < len(paths) else ""
        for key in _LISTS:
            for name, entry in _named(cfg.get(key), key.removesuffix("s")).items():
                if name not in merged[key]:
                    merged[key][name] = entry
                    origin[key][name] = where
        if not merged["current"] and cfg.get("current-context"):
            merged["current"] = str(cfg["current-context"])
    merged["origin"] = origin
    return merged


@contextmanager
def _naming(path: str) -> Iterator[None]:
    """A :class:`KubeconfigError` raised inside names the kubeconfig ``path`` first."""
    try:
        yield
    except KubeconfigError as exc:
        raise KubeconfigError(f"kubeconfig {path}: {exc}") from None


@dataclass(frozen=True, slots=True)
class ResolvedKubeconfig:
    """The chosen context, and a one-context kubeconfig to load credentials from.

    ``config`` is built from the files as read once, so that a kubeconfig
    given as a pipe (``--kubeconfig <(...)``) is not read a second time.
    It holds credentials: never print it.
    """

    info: ContextInfo
    config: dict[str, Any] = field(repr=False)


def load_context(
    explicit_file: str | None,
    context: str | None,
    env: Mapping[str, str] | None = None,
    *,
    secrets: Secrets,
) -> ResolvedKubeconfig:
    """The context to read and its configuration, or a :class:`KubeconfigError`.

    Every credential of every file read is recorded into ``secrets`` (the session's).
    """
    paths = kubeconfig_paths(explicit_file, env)
    existing = [p for p in paths if p.exists()]
    if not existing:
        raise KubeconfigError(
            "no kubeconfig found (looked at " + ", ".join(str(p) for p in paths) + ")"
        )
    merged = merge([_load(p, secrets) for p in existing], existing)
    files = ", ".join(str(p) for p in existing)
    origin = merged["origin"]
    name = context or merged["current"]
    if not name:
        raise KubeconfigError(f"no current context is set in {files}; pass --context NAME")
    ctx = merged["contexts"].get(name)
    if ctx is None:
        known = ", ".join(sorted(merged["contexts"])) or "none"
        raise KubeconfigError(f"context {name!r} not found in {files} (known: {known})")
    with _naming(origin["contexts"][name]):
        cluster_name, user_name = _context_names(name, ctx, merged, files)
    cluster = merged["clusters"][cluster_name]
    user = merged["users"].get(user_name, {}) if user_name else {}
    cluster_file = origin["clusters"][cluster_name]
    user_file = origin["users"].get(user_name, "")
    with _naming(cluster_file):
        server = _check_cluster(cluster_name, cluster, secrets)
        _check_named_files(f"cluster {cluster_name!r}", cluster, _FILE_FIELDS["cluster"])
    with _naming(user_file):
        _check_user(user_name, user)
        _check_named_files(f"user {user_name!r}", user, _FILE_FIELDS["user"])
        user = _read_token_file(user_name, user, secrets)
    defined_in = tuple(
        dict.fromkeys(f for f in (origin["contexts"][name], cluster_file, user_file) if f)
    )
    info = ContextInfo(
        name=name,
        cluster=cluster_name,
        user=user_name,
        namespace=str(ctx.get("namespace", "") or "default"),
        server=server,
        files=tuple(str(p) for p in existing),
        defined_in=defined_in,
    )
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": name,
        "contexts": [{"name": name, "context": ctx}],
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}] if user_name else [],
    }
    return ResolvedKubeconfig(info, config)


def _context_names(name: str, ctx: object, merged: dict[str, Any], files: str) -> tuple[str, str]:
    """The cluster and user the context names, or a :class:`KubeconfigError` saying
    which is missing from ``files`` (all the kubeconfig files read).
    """
    if not isinstance(ctx, dict):
        raise KubeconfigError(f"context {name!r} is {_kind(ctx)}, not a mapping")
    cluster_name = str(ctx.get("cluster", "") or "")
    if cluster_name not in merged["clusters"]:
        raise KubeconfigError(
            f"context {name!r} names cluster {cluster_name!r}, which is not defined in {files}"
        )
    user_name = str(ctx.get("user", "") or "")
    if user_name and user_name not in merged["users"]:
        raise KubeconfigError(
            f"context {name!r} names user {user_name!r}, which is not defined in {files}"
        )
    return cluster_name, user_name


def _read_token_file(name: str, user: dict[str, Any], secrets: Secrets) -> dict[str, Any]:
    """The user entry with its ``tokenFile`` read into ``token`` (trimmed as kubectl trims
    it, recorded into ``secrets``); an inline ``token`` wins, as in the Kubernetes client.
    """
    path = user.get("tokenFile")
    if not isinstance(path, str) or not path or user.get("token"):
        return user
    try:
        token = read_secret_file(Path(path).expanduser())
    except OSError as exc:
        raise KubeconfigError(f"tokenFile of user {name!r}: {exc.strerror or exc}") from None
    secrets.add(token)
    return {**{k: v for k, v in user.items() if k != "tokenFile"}, "token": token}


def _check_named_files(owner: str, entry: dict[str, Any], names: Sequence[str]) -> None:
    """Every file the entry names is a regular file within its limit (the Kubernetes client
    reads them later, and a FIFO or a device there would hang or flood it).
    """
    for name in names:
        value = entry.get(name)
        if not isinstance(value, str) or not value:
            continue
        limit = TOKEN if name == "tokenFile" else CERTIFICATE
        try:
            check_regular(Path(value).expanduser(), limit)
        except FileRefusedError as exc:
            raise KubeconfigError(f"{name} of {owner}: {exc}") from None
        except OSError as exc:
            raise KubeconfigError(
                f"{name} of {owner}: cannot read {value}: {exc.strerror or exc}"
            ) from None


def context_names(
    explicit_file: str | None, env: Mapping[str, str] | None = None, *, secrets: Secrets
) -> list[str]:
    """Every context the kubeconfig files define, in file order (first definition wins);
    every credential of the files is recorded into ``secrets``.
    """
    paths = kubeconfig_paths(explicit_file, env)
    existing = [p for p in paths if p.exists()]
    if not existing:
        raise KubeconfigError(
            "no kubeconfig found (looked at " + ", ".join(str(p) for p in paths) + ")"
        )
    return list(merge([_load(p, secrets) for p in existing], existing)["contexts"])


def resolve_context(
    explicit_file: str | None,
    context: str | None,
    env: Mapping[str, str] | None = None,
    *,
    secrets: Secrets,
) -> ContextInfo:
    """The context to read, or a :class:`KubeconfigError` that says what is wrong."""
    return load_context(explicit_file, context, env, secrets=secrets).info


def _check_cluster(name: str, cluster: object, secrets: Secrets) -> str:
    """The cluster's server URL, or a KubeconfigError naming what is wrong."""
    if not isinstance(cluster, dict) or not cluster:
        raise KubeconfigError(f"cluster {name!r} is empty (it needs at least a 'server')")
    server = cluster.get("server")
    if not isinstance(server, str) or not server.strip():
        raise KubeconfigError(f"cluster {name!r} has no 'server'")
    parts = urlsplit(server.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise KubeconfigError(
            f"server of cluster {name!r} is not an http(s) URL: {secrets.scrub(server)[:200]!r}"
        )
    if "@" in parts.netloc:
        raise KubeconfigError(
            f"server of cluster {name!r} holds user info (user:password@ before the host); "
            "credentials belong in the kubeconfig's user entry, not the server URL"
        )
    try:
        _ = parts.port
    except ValueError:
        raise KubeconfigError(f"server of cluster {name!r} has an invalid port") from None
    for key in _BASE64_FIELDS["cluster"]:
        _check_base64(f"cluster {name!r}", key, cluster.get(key))
    for key in ("insecure-skip-tls-verify",):
        if key in cluster and not isinstance(cluster[key], bool):
            raise KubeconfigError(f"{key} of cluster {name!r} is not true or false")
    return server.strip()


def _check_user(name: str, user: object) -> None:
    if not isinstance(user, dict):
        raise KubeconfigError(f"user {name!r} is {_kind(user)}, not a mapping")
    for key in _BASE64_FIELDS["user"]:
        _check_base64(f"user {name!r}", key, user.get(key))
    for key in ("token", "username", "password"):
        if key in user and not isinstance(user[key], str):
            raise KubeconfigError(f"{key} of user {name!r} is {_kind(user[key])}, not a string")
    token = user.get("token")
    if isinstance(token, str) and has_control_character(token):
        raise KubeconfigError(
            f"token of user {name!r} holds a control character (a line break, tab or NUL)"
        )
    plugin = user.get("exec")
    if plugin is None:
        return
    if not isinstance(plugin, dict):
        raise KubeconfigError(f"exec of user {name!r} is {_kind(plugin)}, not a mapping")
    if not isinstance(plugin.get("command"), str) or not plugin["command"]:
        raise KubeconfigError(f"exec of user {name!r} has no 'command'")
    if not isinstance(plugin.get("apiVersion"), str):
        raise KubeconfigError(f"exec of user {name!r} has no 'apiVersion'")
    args = plugin.get("args")
    if args is not None and not (isinstance(args, list) and all(_scalar(a) for a in args)):
        raise KubeconfigError(f"exec args of user {name!r} are not a list of strings")
    env = plugin.get("env")
    if env is not None and not (
        isinstance(env, list)
        and all(isinstance(e, dict) and "name" in e and "value" in e for e in env)
    ):
        raise KubeconfigError(f"exec env of user {name!r} is not a list of {{name, value}} entries")


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _check_base64(owner: str, key: str, value: object) -> None:
    if value is None or value == "":
        return
    if not isinstance(value, str):
        raise KubeconfigError(f"{key} of {owner} is {_kind(value)}, not base64 text")
    try:
        base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        raise KubeconfigError(f"{key} of {owner} is not valid base64") from None
