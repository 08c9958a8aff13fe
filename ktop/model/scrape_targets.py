"""What a scrape reads: the control-plane components, their metrics endpoints (targets)
and the samples of an exposition, as the events name them (:mod:`ktop.model.events`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Component(StrEnum):
    """Which control-plane component a metrics target is."""

    APISERVER = "apiserver"
    ETCD = "etcd"
    SCHEDULER = "scheduler"
    CONTROLLER_MANAGER = "controller-manager"


Labels = tuple[tuple[str, str], ...]
"""Metric labels as a tuple of ``(name, value)`` pairs sorted by name."""


LOAD_BALANCED = "(load-balanced)"
"""The instance name of reads through the kubeconfig's (load-balanced) server address,
used only while no apiserver instance is known: never summed with real instances."""


@dataclass(frozen=True, slots=True)
class Target:
    """One metrics endpoint: a component instance."""

    component: Component
    instance: str


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample of a Prometheus exposition (histogram buckets included)."""

    name: str
    labels: Labels
    value: float
