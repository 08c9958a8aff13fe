"""Prometheus as a metrics transport, reached the way it is deployed.

For every family ktop reads, one instant query returns the raw series summed
by ``instance`` and the labels ktop keeps; the results become the same
``MetricsScraped`` events a direct scrape produces, so rates and quantiles
are computed by the same model code. The PromQL is built by
:func:`family_query` (see docs/panes.md for the per-pane equivalents).

Prometheus is reached by URL (bearer token file, basic auth, CA bundle and
client certificate as options) or, with ``k8s://NAMESPACE/SERVICE:PORT``,
through the apiserver's service proxy with the kubeconfig's credentials.
:func:`prometheus_client` builds the client for either; everything that talks
to Prometheus uses it, so every request is counted by the cost meter.

prometheus-api-client is synchronous: its calls run in worker threads of
their own (:class:`PrometheusCalls`), at most a few at a time, each with a
timeout.

One poll is one instant: it first asks Prometheus for its own time (``time()``,
so a skewed local clock does not matter) and evaluates every query of the poll
at that time, so that families read in one poll are a consistent cut even when
the poll takes seconds on a loaded server.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import requests
from prometheus_api_client import PrometheusConnect
from urllib3.util.retry import Retry

from ktop.files import TOKEN, read_text_bounded
from ktop.model.events import (
    FEED_KUBE_STATE_METRICS,
    Component,
    Event,
    FeedFailed,
    MetricsScraped,
    NodeReadinessByLabel,
    Sample,
    ScrapeFailed,
    Target,
)
from ktop.model.wanted import FAMILIES, HISTOGRAMS
from ktop.sources.base import Emit
from ktop.sources.live import DEFAULT_CLUSTER_LABEL
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.reads import SERVICE_PROXY
from ktop.sources.live.scrape import failure_reason
from ktop.sources.live.transport import (
    USER_AGENT,
    Resolve,
    instance_name,
    resolve_host,
    same_instances,
)

DEFAULT_JOBS: Mapping[Component, str] = {
    Component.APISERVER: ".*apiserver.*",
    Component.ETCD: ".*etcd.*",
    Component.SCHEDULER: ".*scheduler.*",
    Component.CONTROLLER_MANAGER: ".*controller-manager.*",
}
"""Which Prometheus ``job`` labels hold each component (regular expressions)."""

_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")

K8S_SCHEME = "k8s://"
DESTINATION = "prometheus"
"""The cost meter's name for requests to Prometheus."""
DESTINATION_PROXIED = "prometheus via apiserver"
"""... and for requests to Prometheus through the apiserver's service proxy (they cost
the apiserver too)."""

T = TypeVar("T")


class PrometheusConfigError(ValueError):
    """A Prometheus address or option that cannot work; the message says why."""


@dataclass(frozen=True, slots=True)
class PrometheusAuth:
    """How to authenticate to Prometheus and check its certificate (all optional)."""

    bearer_token_file: str | None = None
    """Read before every request (projected tokens rotate)."""
    username: str | None = None
    password_file: str | None = None
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    insecure: bool = False


@dataclass(frozen=True, slots=True)
class KubeAccess:
    """How to reach the apiserver with the kubeconfig's credentials (service proxy)."""

    server: str
    verify: bool | str
    """True, False, or a CA bundle file."""
    cert: tuple[str, str] | None
    token: Callable[[], str]
    """The ``Authorization`` header value (empty when the client certificate is used)."""


def service_proxy_url(server: str, address: str) -> str:
    """The service-proxy base URL of ``k8s://NAMESPACE/SERVICE:PORT``.

    ``SERVICE`` may carry a scheme (``https:prometheus:9090``) as the proxy allows;
    ``PORT`` is a port number or name.
    """
    rest = address.removeprefix(K8S_SCHEME).strip("/")
    namespace, sep, service = rest.partition("/")
    if not sep or not namespace or not service or "/" in service:
        raise PrometheusConfigError(
            f"{address!r}: expected k8s://NAMESPACE/SERVICE:PORT "
            "(for example k8s://monitoring/prometheus-k8s:web)"
        )
    path = SERVICE_PROXY.format(namespace=quote(namespace), service=quote(service, safe=":"))
    return server.rstrip("/") + path


class _Bearer(requests.auth.AuthBase):
    """Sets ``Authorization`` from a callable on every request."""

    def __init__(self, header: Callable[[], str]) -> None:
        self.header = header

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        value = self.header()
        if value:
            r.headers["Authorization"] = value
        return r


class CountedSession(requests.Session):
    """A requests session whose every request the cost meter counts."""

    def __init__(self, meter: CostMeter, destination: str = DESTINATION) -> None:
        super().__init__()
        self.meter = meter
        self.destination = destination
        self.headers["User-Agent"] = USER_AGENT

    def request(  # type: ignore[override]
        self, method: str, url: str, *args: Any, **kwargs: Any
    ) -> requests.Response:
        """Count the request, send it, count the answer and its bytes."""
        self.meter.sent(self.destination)
        resp = super().request(method, url, *args, **kwargs)
        self.meter.request(urlsplit(url).path, resp.headers, resp.status_code, self.destination)
        self.meter.received(len(resp.content), self.destination)
        return resp


def _file_token(path: str) -> Callable[[], str]:
    def header() -> str:
        return "Bearer " + read_text_bounded(path, TOKEN).strip()

    return header


def prometheus_client(
    address: str,
    meter: CostMeter,
    *,
    auth: PrometheusAuth | None = None,
    kube: KubeAccess | None = None,
    timeout_s: float = 10.0,
) -> PrometheusConnect:
    """The one way ktop builds a Prometheus client (instant and range queries alike).

    ``address`` is an ``http(s)://`` URL, or ``k8s://NAMESPACE/SERVICE:PORT`` to go
    through the apiserver's service proxy with ``kube``'s credentials. Every request
    is counted by ``meter`` under ``prometheus`` (``prometheus via apiserver`` through the
    service proxy); the library's own retries are off
    (a hidden retry would be an uncounted request: ktop retries at its next poll).
    """
    auth = auth or PrometheusAuth()
    proxied = address.startswith(K8S_SCHEME)
    session = CountedSession(meter, DESTINATION_PROXIED if proxied else DESTINATION)
    basic: tuple[str, str] | None = None
    bearer: Callable[[], str] | None = None
    if proxied:
        if kube is None:
            raise PrometheusConfigError(f"{address}: the service proxy needs a kubeconfig")
        url = service_proxy_url(kube.server, address)
        session.verify = kube.verify
        session.cert = kube.cert
        bearer = kube.token
    else:
        parts = urlsplit(address)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise PrometheusConfigError(
                f"{address!r}: expected an http(s):// URL or k8s://NAMESPACE/SERVICE:PORT"
            )
        url = address.rstrip("/")
        session.verify = False if auth.insecure else (auth.ca or True)
        if auth.cert:
            session.cert = (auth.cert, auth.key) if auth.key else auth.cert
        if auth.bearer_token_file:
            bearer = _file_token(auth.bearer_token_file)
        if auth.username is not None:
            password = ""
            if auth.password_file:
                password = read_text_bounded(auth.password_file, TOKEN).rstrip("\n")
            basic = (auth.username, password)
        if bearer is not None and basic is not None:
            raise PrometheusConfigError(
                "give a bearer token or basic auth for Prometheus, not both"
            )
    client_auth: Any = basic if basic is not None else (_Bearer(bearer) if bearer else None)
    return PrometheusConnect(
        url=url,
        session=session,
        auth=client_auth,
        retry=Retry(total=0, connect=0, read=0, redirect=0, status=0),
        timeout=timeout_s,  # requests takes a float
    )


class PrometheusCalls:
    """Runs blocking prometheus-api-client calls off the event loop: at most
    ``workers`` at a time, each abandoned after ``timeout_s``.

    Each call runs in a daemon thread of its own rather than in a thread pool: a pool's
    threads are joined when the interpreter exits, so one abandoned call (a slow range
    query on a loaded Prometheus) would keep ``ktop triage`` from exiting after its
    report. An abandoned call's thread ends by itself when its request does (the
    client's read timeout bounds it) and frees its slot as soon as it is abandoned.
    """

    def __init__(self, workers: int = 2, timeout_s: float = 30.0) -> None:
        self.timeout_s = timeout_s
        self.workers = workers
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._slots, self._loop = asyncio.Semaphore(self.workers), loop
        return self._slots

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread; TimeoutError after ``timeout_s``."""
        if self._closed:
            raise RuntimeError("the Prometheus calls were closed")
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
        # that arrives as the call completes, and the source would never stop.
        async with asyncio.timeout(self.timeout_s), self._semaphore():
            return await _in_daemon_thread(fn, *args)

    def close(self) -> None:
        """Take no more calls (calls still running finish in the background)."""
        self._closed = True


async def _in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a new daemon thread; its result or exception, awaited."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, exc: BaseException | None) -> None:
        if done.done():
            return  # abandoned: the caller timed out or was cancelled
        if exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result: T | None = fn(*args)
        except BaseException as exc:  # handed to the awaiting task, never lost
            outcome: tuple[T | None, BaseException | None] = (None, exc)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="ktop-prometheus", daemon=True).start()
    return await done


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


def instances_of(names: Iterable[str]) -> list[Target]:
    """Apiserver targets of these instance names."""
    return [Target(Component.APISERVER, n) for n in names]


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


@dataclass(slots=True)
class PrometheusMetrics:
    """Polls Prometheus for every component; tells whether it is healthy and which
    instances it knows (so that nothing else reads them through a load balancer).
    """

    client: PrometheusConnect
    where: str
    """The address the user gave (for messages)."""
    clock: Callable[[], float]
    interval_s: float = 15.0
    jobs: Mapping[Component, str] = field(default_factory=lambda: dict(DEFAULT_JOBS))
    calls: PrometheusCalls = field(default_factory=PrometheusCalls)
    healthy: bool = False
    last_error: str = ""
    queries_total: int = 0
    instances: dict[Component, frozenset[str]] = field(default_factory=dict)
    """Instances of each component that Prometheus scrapes (from ``up``)."""
    polled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set after every poll, successful or not (discovery waits for the first)."""
    on_instances: Callable[[], None] | None = None
    """Called when the set of apiserver instances changes."""
    evaluated_at: float | None = None
    """Prometheus' time at which the last successful poll's queries were evaluated."""
    matcher: str = ""
    """:func:`cluster_matcher`: selects one cluster of a Prometheus that holds many."""
    readiness_labels: tuple[str, ...] = ()
    """Node labels to read readiness per value of from kube-state-metrics (metrics-only)."""
    apiservers: tuple[str, ...] = ()
    """The apiserver instances given (``--apiserver``): when set, the only ones. Prometheus'
    instances are named as the given one at the same address (one row each whatever the
    transport); the others are not read (:func:`same_instances`)."""
    resolve: Resolve = resolve_host
    seen: set[Target] = field(default_factory=set)
    """Targets Prometheus gave data for (its polls, and the backfill's window before the
    first poll): a failed poll reports each of them failed, so none goes quietly stale."""
    _extra: list[Event] = field(default_factory=list)
    _stopping: threading.Event = field(default_factory=threading.Event)

    def _server_time(self) -> float:
        """Prometheus' own clock (the instant every query of a poll is evaluated at)."""
        self.queries_total += 1
        result: Any = self.client.custom_query("time()")
        try:
            return float(result[0])
        except (IndexError, TypeError, ValueError):
            raise ValueError(f"time() returned {str(result)[:80]!r}, not a scalar") from None

    def _readiness_sync(self, pinned: Mapping[str, str]) -> list[Event]:
        """Readiness per label from kube-state-metrics, or the feed's failure."""
        events: list[Event] = []
        for label in self.readiness_labels:
            self.queries_total += 1
            try:
                results = self.client.custom_query(
                    readiness_query(label, self.matcher), params=dict(pinned)
                )
            except Exception as exc:  # the metrics still count; this feed says what failed
                reason = f"kube-state-metrics readiness by {label}: {failure_reason(exc)}"
                return [FeedFailed(self.clock(), FEED_KUBE_STATE_METRICS, reason)]
            rows = readiness_rows(label, results)
            if rows:
                events.append(NodeReadinessByLabel(self.clock(), label, rows))
        if self.readiness_labels and not events:
            reason = (
                "no kube_node_status_condition joined with kube_node_labels in Prometheus "
                "(kube-state-metrics absent, or its --metric-labels-allowlist lacks "
                + ", ".join(self.readiness_labels)
                + ")"
            )
            events.append(FeedFailed(self.clock(), FEED_KUBE_STATE_METRICS, reason))
        return events

    def _poll_sync(
        self,
    ) -> tuple[float, dict[Target, list[Sample]], dict[Component, frozenset[str]]]:
        prom = self.client
        at = self._server_time()
        pinned = at_instant(at)
        out: dict[Target, list[Sample]] = {}
        instances: dict[Component, frozenset[str]] = {}
        for component, families in FAMILIES.items():
            job_re = self.jobs.get(component)
            if not job_re:
                continue
            for family, kept in families.items():
                if self._stopping.is_set():
                    raise asyncio.CancelledError  # the source stopped: no more queries
                self.queries_total += 1
                query = family_query(family, kept, job_re, self.matcher)
                results = prom.custom_query(query, params=pinned)
                for instance, samples in results_to_samples(family, results).items():
                    out.setdefault(Target(component, instance), []).extend(samples)
            self.queries_total += 1
            up = prom.custom_query(f'up{{job=~"{job_re}"{self.matcher}}}', params=pinned)
            names = set()
            for r in up:
                instance = instance_name(str((r.get("metric") or {}).get("instance", "")))
                names.add(instance)
                target = Target(component, instance)
                if float(r["value"][1]) == 0:
                    out.pop(target, None)
                    out.setdefault(target, [])
            instances[component] = frozenset(names)
        if self.apiservers:
            out, instances = self._given_apiservers(out, instances)
        self._extra = self._readiness_sync(pinned)
        return at, out, instances

    def _given_apiservers(
        self, out: dict[Target, list[Sample]], instances: dict[Component, frozenset[str]]
    ) -> tuple[dict[Target, list[Sample]], dict[Component, frozenset[str]]]:
        """Rename Prometheus' apiserver instances to the given ones; drop the others.
        Resolves host names: runs in a worker thread, like the poll.
        """
        seen = instances.get(Component.APISERVER, frozenset())
        rename = given_apiservers(self.apiservers, seen, self.resolve)
        renamed: dict[Target, list[Sample]] = {}
        for target, samples in out.items():
            if (kept := rename(target)) is not None:
                renamed[kept] = samples
        targets = (rename(Target(Component.APISERVER, n)) for n in seen)
        named = frozenset(t.instance for t in targets if t is not None)
        return renamed, {**instances, Component.APISERVER: named}

    async def poll_once(self, emit: Emit) -> None:
        """One poll; its results (or the failure, for every target seen) as events."""
        try:
            at, polled, instances = await self.calls.call(self._poll_sync)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.healthy = False
            self.last_error = f"Prometheus at {self.where} failed: {failure_reason(exc)}"
            now = self.clock()
            emit(
                [
                    ScrapeFailed(now, t, self.last_error)
                    for t in sorted(self.seen, key=lambda t: (t.component, t.instance))
                ]
            )
            self.polled.set()
            return
        changed = instances.get(Component.APISERVER) != self.instances.get(Component.APISERVER)
        self.instances = instances
        self.evaluated_at = at
        self.healthy, self.last_error = True, ""
        self.polled.set()
        if changed and self.on_instances is not None:
            self.on_instances()
        now = self.clock()
        events: list[Event] = []
        for target, samples in polled.items():
            if samples:
                events.append(MetricsScraped(now, target, tuple(samples)))
            else:
                events.append(ScrapeFailed(now, target, "Prometheus reports up == 0"))
            self.seen.add(target)
        events.extend(self._extra)
        emit(events)

    def serves(self, component: Component, instance: str) -> bool:
        """True when the last poll succeeded and returned this instance."""
        return self.healthy and instance in self.instances.get(component, frozenset())

    async def run(self, emit: Emit) -> None:
        """Poll until cancelled."""
        try:
            while not self._stopping.is_set():
                await self.poll_once(emit)
                await asyncio.sleep(self.interval_s)
        finally:
            self._stopping.set()
            self.calls.close()
            self.client.close()
