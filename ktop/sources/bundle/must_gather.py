"""An OpenShift must-gather (``oc adm must-gather``) read as a bundle, without
conversion: its API objects, its per-apiserver APF dumps and its time, mapped onto what
a bundle's ``api/`` and ``apf/`` give (docs/bundle-format.md, "A must-gather").

A must-gather is recognised by its ``timestamp`` file beside ``cluster-scoped-resources/``
or ``namespaces/``, at the directory given or one level down (the image directory
``oc`` writes under ``must-gather.local.<id>/``). What it lacks is said as a missing
part, never taken for healthy: Leases are there only when it inspected every namespace,
pods and events only of the namespaces it inspected.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from ktop.files import BUNDLE_FILE, read_bounded
from ktop.model import events as ev
from ktop.model.events import Area, Component, Event, Target
from ktop.model.model_inputs import COMPONENT_AREAS
from ktop.sources.bundle.etcd_info import read_etcd_info
from ktop.sources.bundle.parts import BundleError, BundleRead, relative
from ktop.sources.openmetrics_slice import SliceError, read_slice

TIMESTAMP = "timestamp"
NODES_DIR = "cluster-scoped-resources/core/nodes"
NAMESPACED = {
    "pods": "namespaces/*/core/pods.yaml",
    "events": "namespaces/*/core/events.yaml",
    "leases": "namespaces/*/coordination.k8s.io/leases.yaml",
    "resourcequotas": "namespaces/*/core/resourcequotas.yaml",
}
"""Per bundle API file: the must-gather's List files of every inspected namespace."""
FLOWSCHEMAS_DIR = "cluster-scoped-resources/flowcontrol.apiserver.k8s.io/flowschemas"
APF_DUMPS = (
    "namespaces/openshift-kube-apiserver/pods/*/kube-apiserver/kube-apiserver/"
    "api_priority_and_fairness"
)
"""One directory per kube-apiserver pod (``gather_priority_and_fairness``): the files
``priority_levels``, ``queues`` and ``requests`` (without request details)."""
AUDIT_LOGS = "audit_logs/kube-apiserver"
METRICS_SLICE = "monitoring/metrics/metrics.openmetrics"
"""``gather_metrics``' slice (``promtool tsdb dump-openmetrics``), or the same ``.gz``."""
_WHEN = re.compile(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(\.\d+)?\s*(Z|[+-]\d\d:?\d\d)?")
_WHY_MISSING = {
    "leases": "Leases are gathered only with every namespace inspected",
    "pods": "pods are gathered only for the namespaces inspected",
    "events": "events are gathered only for the namespaces inspected",
    "resourcequotas": "quotas are gathered only for the namespaces inspected",
}


def must_gather_root(directory: Path) -> Path | None:
    """The must-gather's root (its ``timestamp`` beside its resources) at ``directory``
    or one level down; None when ``directory`` is not a must-gather.
    """
    candidates = [directory]
    if directory.is_dir():
        candidates += sorted(p for p in directory.iterdir() if p.is_dir())
    for d in candidates:
        if (d / TIMESTAMP).is_file() and any(
            (d / part).is_dir() for part in ("cluster-scoped-resources", "namespaces")
        ):
            return d
    return None


def gathered_dirs(directory: Path, part: str) -> list[Path]:
    """The directories ``part`` (a must-gather's relative path, e.g. :data:`AUDIT_LOGS`) at
    ``directory`` and one level down (the image directory ``oc`` writes), in that order;
    empty when ``directory`` holds none. An audit-only gather has no resources beside its
    ``timestamp``, so this does not ask for :func:`must_gather_root`.
    """
    if not directory.is_dir():
        return []
    return [d for d in (directory / part, *sorted(directory.glob(f"*/{part}"))) if d.is_dir()]


def gathered_at(root: Path) -> float | None:
    """When the must-gather began, from its ``timestamp`` file (its first time; ``oc``
    writes Go's time format, ``2026-12-07 03:10:00.123 +0000 UTC``); None if unreadable.
    """
    try:
        first = read_bounded(root / TIMESTAMP, BUNDLE_FILE).decode("utf-8", "replace")
    except OSError:
        return None
    m = _WHEN.search(first)
    if m is None:
        return None
    zone = (m.group(4) or "+0000").replace("Z", "+0000").replace(":", "")
    frac = (m.group(3) or ".0")[:7]
    stamp = f"{m.group(1)} {m.group(2)}{frac} {zone}"
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f %z").timestamp()


@dataclass(slots=True)
class Gathered:
    """What a must-gather holds, as a bundle's reader takes it."""

    at: float | None
    lists: dict[str, list[dict[str, Any]] | str] = field(default_factory=dict)
    """Per bundle API file: its objects, or why there are none."""
    apf: list[tuple[float, str, Path, str]] = field(default_factory=list)
    """``(time, instance, file, text)`` of every ``priority_levels`` dump."""
    requests: list[tuple[float, str, Path, str]] = field(default_factory=list)
    """The same of every ``requests`` dump."""
    etcd: list[Event] = field(default_factory=list)
    """Each etcd member's gauges from ``etcd_info/``, or why it has none."""
    metrics: list[Event] = field(default_factory=list)
    """The scrapes of the metrics slice, in time order."""


def _yaml(root: Path, f: Path, out: BundleRead) -> Any:
    """One YAML file's document; None with the problem kept."""
    try:
        raw = read_bounded(f, BUNDLE_FILE)
        return yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as exc:
        out.errors.append(BundleError(relative(root, f), None, exc.strerror or str(exc)))
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        out.errors.append(BundleError(relative(root, f), line, f"not YAML: {exc.problem}"))
    except (yaml.YAMLError, RecursionError) as exc:
        out.errors.append(BundleError(relative(root, f), None, f"not YAML: {type(exc).__name__}"))
    return None


def _items(root: Path, f: Path, doc: Any, out: BundleRead) -> list[dict[str, Any]]:
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        bad = [i for i, x in enumerate(doc["items"]) if not isinstance(x, dict)]
        out.errors += [
            BundleError(relative(root, f), None, f"items[{i}] is not an object") for i in bad
        ]
        return [x for x in doc["items"] if isinstance(x, dict)]
    if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict):
        return [doc]
    if doc is not None:
        out.errors.append(BundleError(relative(root, f), None, "not a List or an object"))
    return []


def _lists(root: Path, out: BundleRead) -> dict[str, list[dict[str, Any]] | str]:
    lists: dict[str, list[dict[str, Any]] | str] = {}
    node_files = sorted((root / NODES_DIR).glob("*.yaml"))
    if node_files:
        lists["nodes"] = [x for f in node_files for x in _items(root, f, _yaml(root, f, out), out)]
    else:
        out.missing.append(f"{NODES_DIR}/")
        lists["nodes"] = f"{NODES_DIR}/ is not in the must-gather"
    for name, pattern in NAMESPACED.items():
        files = sorted(root.glob(pattern))
        if not files:
            out.missing.append(pattern)
            lists[name] = f"no {pattern} in the must-gather ({_WHY_MISSING[name]})"
            continue
        lists[name] = [x for f in files for x in _items(root, f, _yaml(root, f, out), out)]
    return lists


def _dumps(
    root: Path, at: float, out: BundleRead, name: str
) -> Iterator[tuple[float, str, Path, str]]:
    """Every apiserver pod's ``name`` dump: ``(time, pod, file, text)``."""
    for d in sorted(root.glob(APF_DUMPS)):
        f = d / name
        if not f.is_file():
            continue
        try:
            text = read_bounded(f, BUNDLE_FILE).decode("utf-8", errors="replace")
        except OSError as exc:
            out.errors.append(BundleError(relative(root, f), None, exc.strerror or str(exc)))
            continue
        pod = d.parents[2].name
        yield at, pod, f, text


def source_of(name: str) -> str:
    """Where a bundle API file's objects come from in a must-gather (for messages)."""
    return NODES_DIR + "/*.yaml" if name == "nodes" else NAMESPACED.get(name, name)


def gather(root: Path, out: BundleRead) -> Gathered:
    """Read a must-gather at ``root`` (from :func:`must_gather_root`)."""
    at = gathered_at(root)
    if at is None:
        out.errors.append(BundleError(TIMESTAMP, 1, "no time in it: the APF dumps are not read"))
    g = Gathered(at, _lists(root, out))
    if at is not None:
        g.apf = list(_dumps(root, at, out, "priority_levels"))
        g.requests = list(_dumps(root, at, out, "requests"))
        if not g.apf:
            out.missing.append(f"{APF_DUMPS}/ (gather_priority_and_fairness)")
        info = read_etcd_info(root, out)
        g.etcd = [
            ev.MetricsScraped(at, Target(Component.ETCD, name), samples)
            for name, samples in info.samples.items()
        ]
        g.etcd += [
            ev.ScrapeFailed(at, Target(Component.ETCD, name), why)
            for name, why in info.failed.items()
        ]
    g.metrics = _slice(root, out)
    return g


def _slice(root: Path, out: BundleRead) -> list[Event]:
    """The metrics slice's scrapes (``gather_metrics``), with its problems kept."""
    found = [p for p in (root / METRICS_SLICE, root / f"{METRICS_SLICE}.gz") if p.is_file()]
    if not found:
        out.missing.append(f"{METRICS_SLICE} (gather_metrics)")
        return []
    try:
        read = read_slice(found[0])
    except SliceError as exc:
        out.errors.append(BundleError(relative(root, found[0]), None, str(exc)))
        return []
    out.errors += [BundleError(relative(root, found[0]), None, p) for p in read.problems]
    areas: dict[Area, None] = {}
    for e in read.events:
        if isinstance(e, ev.MetricsScraped):
            first, last, n = out.scrape_windows.get(e.target, (e.at, e.at, 0))
            out.scrape_windows[e.target] = (min(first, e.at), max(last, e.at), n + 1)
            areas.update(dict.fromkeys(COMPONENT_AREAS[e.target.component]))
    out.read_from(relative(root, found[0]), areas)
    return read.events
