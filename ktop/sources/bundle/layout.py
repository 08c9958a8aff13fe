"""The bundle layout, defined once: the reader, the capture command and the docs use it."""

from __future__ import annotations

from ktop.model import events as ev
from ktop.model.events import Component

API_DIR = "api"
METRICS_DIR = "metrics"
APF_DIR = "apf"
APF_REQUESTS_DIR = "apf-requests"

API_RESOURCES: tuple[str, ...] = (
    "nodes",
    "pods",
    "events",
    "leases",
    "flowschemas",
    "prioritylevelconfigurations",
    "endpointslices",
    "resourcequotas",
)
"""``api/<resource>.json``: what ``kubectl get <resource> -A -o json`` prints."""

FEEDS: dict[str, tuple[str, ...]] = {
    "nodes": (ev.FEED_NODES,),
    "pods": (ev.FEED_PENDING_PODS,),
    "events": (ev.FEED_EVENTS,),
    "leases": (ev.FEED_LEASES, ev.FEED_IDENTITIES),
    "resourcequotas": (ev.FEED_QUOTAS,),
}
"""The model feeds each API file fills (the others are read for validation only)."""

COMPONENTS: dict[str, Component] = {c.value: c for c in Component}
"""``metrics/<component>/``: apiserver, etcd, scheduler, controller-manager."""

METRICS_SUFFIX = ".prom"
APF_SUFFIX = ".txt"
