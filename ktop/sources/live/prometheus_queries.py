"""The PromQL the Prometheus transport sends, and its answers turned into samples (pure):
families summed by instance with the labels ktop keeps, one cluster of many, node
readiness from kube-state-metrics, apiserver instances named as the given ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ktop.model.events import (
    Component,
    Sample,
    Target,
)
from ktop.model.slo import SLI_FAMILIES, TOTAL, Slo
from ktop.model.wanted import HISTOGRAMS
from ktop.sources.convert import ZONE_LABELS
from ktop.sources.live import DEFAULT_CLUSTER_LABEL
from ktop.sources.live.prometheus_connect import PrometheusConfigError
from ktop.sources.live.transport import (
    Resolve,
    instance_name,
    same_instances,
)

if TYPE_CHECKING:
    from prometheus_api_client import PrometheusConnect

DEFAULT_JOBS: Mapping[Component, str] = {
    Component.APISERVER: ".*apiserver.*",
    Component.ETCD: ".*etcd.*",
    Component.SCHEDULER: ".*scheduler.*",
    Component.CONTROLLER_MANAGER: ".*controller-manager.*",
}
"""Which Prometheus ``job`` labels hold each component (regular expressions)."""

_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def at_instant(at: float) -> dict[str, str]:
    """The query parameter that evaluates an instant query at Prometheus time ``at``."""
    return {"time": f"{at:.3f}"}


def _quote(value: str) -> str:
    """A PromQL string literal (double-quoted, backslash and quote escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def cluster_matcher(label: str, value: str | None) -> str:
    """``,LABEL="VALUE"``: the matcher that selects one cluster's series of a Prometheus
    that holds many; ``""`` when no cluster is selected. Every selector ktop builds
    appends it after its ``job`` matcher.
    """
    if value is None:
        return ""
    if not _LABEL_NAME.fullmatch(label):
        raise PrometheusConfigError(f"{label!r} is not a Prometheus label name")
    return f",{label}={_quote(value)}"


def scoped(promql: str, job_re: str, matcher: str) -> str:
    """``promql`` with ``matcher`` added after every ``job=~"JOB_RE"`` matcher in it."""
    if not matcher:
        return promql
    job = f'job=~"{job_re}"'
    return promql.replace(job, job + matcher)


def cluster_values_query(label: str) -> str:
    """The one query that lists the clusters an endpoint holds (``count by (LABEL) (up)``)."""
    if not _LABEL_NAME.fullmatch(label):
        raise PrometheusConfigError(f"{label!r} is not a Prometheus label name")
    return f"count by ({label}) (up)"


def cluster_values(client: PrometheusConnect, label: str = DEFAULT_CLUSTER_LABEL) -> list[str]:
    """The values of ``label`` among the targets Prometheus scrapes, sorted (blocking;
    one instant query, counted by the client's cost meter). Series without the label
    are left out.
    """
    results: Any = client.custom_query(cluster_values_query(label))
    values = {str((r.get("metric") or {}).get(label, "")) for r in results}
    values.discard("")
    return sorted(values)


def ksm_label(label: str) -> str:
    """The label kube-state-metrics gives a node label in ``kube_node_labels``."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", label)


def readiness_query(label: str, matcher: str = "") -> str:
    """Ready-condition status counts per value of a node label (kube-state-metrics)."""
    lab = ksm_label(label)
    m = matcher.lstrip(",")
    cond = f'kube_node_status_condition{{condition="Ready"{matcher}}}'
    labels = f"max by (node, {lab}) (kube_node_labels{{{m}}})"
    return f"sum by ({lab}, status) ({cond} * on (node) group_left ({lab}) {labels})"


def readiness_labels(rack_label: str) -> tuple[str, ...]:
    """The node labels whose readiness kube-state-metrics is asked for (metrics-only mode,
    a span rebuilt from history): the zone, and the rack label of the options.
    """
    return tuple(dict.fromkeys((ZONE_LABELS[-1], rack_label)))


def no_readiness(labels: Sequence[str], where: str = "Prometheus") -> str:
    """Why no readiness per label came from ``where``."""
    return (
        f"no kube_node_status_condition joined with kube_node_labels in {where} "
        "(kube-state-metrics absent, or its --metric-labels-allowlist lacks "
        + ", ".join(labels)
        + ")"
    )


def readiness_over_time(
    label: str, results: list[dict[str, Any]]
) -> list[tuple[float, tuple[tuple[str, int, int], ...]]]:
    """``(time, rows)`` at each step of a range query of :func:`readiness_query`, oldest
    first (rows as :func:`readiness_rows`); a step whose time is not a number is left out.
    """
    by_time: dict[float, list[dict[str, Any]]] = {}
    for r in results:
        metric = r.get("metric") or {}
        for point in r.get("values") or ():
            try:
                at = float(point[0])
            except (IndexError, TypeError, ValueError):
                continue
            if math.isfinite(at):
                by_time.setdefault(at, []).append({"metric": metric, "value": point})
    return [(at, readiness_rows(label, rs)) for at, rs in sorted(by_time.items())]


def readiness_rows(label: str, results: list[dict[str, Any]]) -> tuple[tuple[str, int, int], ...]:
    """``(label value, ready, not ready)`` from :func:`readiness_query`'s results."""
    lab = ksm_label(label)
    by: dict[str, list[int]] = {}
    for r in results:
        metric = r.get("metric") or {}
        try:
            n = round(float(r["value"][1]))
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        counts = by.setdefault(str(metric.get(lab, "")), [0, 0])
        counts[0 if metric.get("status") == "true" else 1] += n
    return tuple((v, c[0], c[1]) for v, c in sorted(by.items()))


def family_query(family: str, kept: tuple[str, ...] | None, job_re: str, matcher: str = "") -> str:
    """The PromQL that returns a family's series as ktop keeps them (of one cluster, with
    :func:`cluster_matcher`'s ``matcher``).
    """
    name = f"{family}_bucket" if family in HISTOGRAMS else family
    labels = ["instance", *(kept or ())]
    if family in HISTOGRAMS:
        labels.append("le")
    selector = f'{name}{{job=~"{job_re}"{matcher}}}'
    if kept is None:
        return selector
    return f"sum by ({', '.join(labels)}) ({selector})"


def results_to_samples(family: str, results: list[dict[str, Any]]) -> dict[str, list[Sample]]:
    """Instant-query results grouped by instance (named as :func:`instance_name` does)."""
    name = f"{family}_bucket" if family in HISTOGRAMS else family
    out: dict[str, list[Sample]] = {}
    for r in results:
        metric = dict(r.get("metric") or {})
        instance = instance_name(str(metric.pop("instance", "")))
        metric.pop("__name__", None)
        try:
            value = float(r["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        labels = tuple(sorted((str(k), str(v)) for k, v in metric.items()))
        out.setdefault(instance, []).append(Sample(name, labels, value))
    return out


def given_apiservers(
    given: Sequence[str], seen: Iterable[str], resolve: Resolve
) -> Callable[[Target], Target | None]:
    """With ``--apiserver`` (``given``, authoritative): a Prometheus target as ktop names
    it, the given instance at the same address, or None for an apiserver not given
    (:func:`same_instances`; resolves names, so call it off the event loop). Other
    components' targets are kept as they are. Without ``given``, every target is kept.
    """
    if not given:
        return lambda target: target
    names = same_instances(given, seen, resolve)

    def rename(target: Target) -> Target | None:
        if target.component is not Component.APISERVER:
            return target
        name = names.get(target.instance)
        return None if name is None else Target(Component.APISERVER, name)

    return rename


DAY_S = 86400.0
SLO_DAY_EVERY_S = 300.0
"""How often the day's SLO counts are asked for (each is a range over up to a day)."""
SLO_DAY_RETRY_S = 60.0
"""How soon the day's SLO counts are asked for again after a failed read (the failure is
shown meanwhile, and ktop's own count since it started stands in)."""


def day_start(at: float) -> float:
    """00:00 UTC of the day of ``at`` (ktop shows times in UTC)."""
    return at - at % DAY_S


def slo_day_query(slo: Slo, seconds: int, job_re: str, matcher: str = "") -> str:
    """The calls of ``slo`` per instance and bucket bound over the last ``seconds``
    (``increase`` of the SLI histogram; the 1.23-1.25 name where the first is absent,
    never the total duration, which includes APF waits and webhooks).
    """
    verbs = "|".join(sorted(slo.verbs))
    scope = "" if slo.scope is None else f",scope={_quote(slo.scope)}"
    selector = f'{{job=~"{job_re}"{matcher},verb=~"{verbs}"{scope}}}'
    return " or ".join(
        f"sum by (instance, le) (increase({name}_bucket{selector}[{seconds}s]))"
        for name in SLI_FAMILIES
        if name != TOTAL
    )


def slo_day_counts(slo: Slo, results: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """``instance -> (slow calls, calls)`` from :func:`slo_day_query`'s results: slow are
    the calls above the largest bucket bound at or under the SLO's limit (so never
    understated), as ktop counts its own scrapes.
    """
    buckets: dict[str, dict[float, float]] = {}
    for r in results:
        metric = r.get("metric") or {}
        try:
            bound = float(str(metric.get("le", "")))
            value = float(r["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if math.isnan(value):  # no sample in the range
            continue
        instance = instance_name(str(metric.get("instance", "")))
        buckets.setdefault(instance, {})[bound] = value
    out: dict[str, tuple[float, float]] = {}
    for instance, by_bound in buckets.items():
        calls = by_bound.get(float("inf"))
        if calls is None:
            continue
        fast = max((v for b, v in by_bound.items() if b <= slo.limit_s), default=0.0)
        out[instance] = (max(0.0, calls - fast), calls)
    return out
