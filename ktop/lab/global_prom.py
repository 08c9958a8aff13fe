"""One Prometheus that scrapes several labs, as a global query endpoint holds many clusters.

Each lab writes its own scrape configuration (:func:`ktop.lab.components.prometheus_config`),
whose targets all carry the lab's ``cluster`` label. :func:`global_prometheus_config` merges
those configurations: job names must be unique in one Prometheus, so every job is renamed
``<cluster>/<job>`` and a relabel rule sets ``job`` back to its canonical name (ktop selects
series by job). Each lab's TLS jobs keep that lab's own token file. The labs' own
``prometheus`` jobs are left out: the global Prometheus scrapes control planes, not other
Prometheuses (a lab may run without one).

:class:`GlobalPrometheus` runs that Prometheus as a recorded process in a directory of its
own; ``stop()`` (also registered with atexit) always kills it.
"""

from __future__ import annotations

import atexit
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ktop.lab import components as comp
from ktop.lab import procs
from ktop.lab.binaries import Binaries, find_binaries
from ktop.lab.config import Layout
from ktop.lab.prom import values_by
from ktop.lab.util import LabError, free_port, http_ok, tail, wait_for

LEFT_OUT_JOBS = frozenset({"prometheus"})
"""Jobs of a lab's own configuration the global Prometheus does not scrape."""
NAME = "prometheus"
"""The component name of the global Prometheus in its directory's state file."""


def _target_clusters(job: Mapping[str, Any]) -> set[str]:
    return {
        str((sc.get("labels") or {}).get("cluster", "")) for sc in job.get("static_configs", [])
    }


def global_prometheus_config(labs: Mapping[str, str]) -> str:
    """One scrape configuration for every lab: ``labs`` maps each lab's ``cluster`` value
    to the text of that lab's own Prometheus configuration.

    Raises LabError when a lab's targets do not all carry its cluster label (two labs
    with the same cluster would be one cell to every reader).
    """
    jobs: list[dict[str, Any]] = []
    settings: dict[str, Any] = {}
    for cluster, text in labs.items():
        own = json.loads(text)  # a lab writes JSON (valid YAML)
        settings = settings or dict(own.get("global", {}))
        for job in own["scrape_configs"]:
            name = str(job["job_name"])
            if name in LEFT_OUT_JOBS:
                continue
            clusters = _target_clusters(job)
            if clusters != {cluster}:
                raise LabError(
                    f"job {name} of lab {cluster!r} labels its targets cluster="
                    f"{sorted(clusters)}, not {cluster!r}"
                )
            renamed = dict(job, job_name=f"{cluster}/{name}")
            renamed["relabel_configs"] = [
                *job.get("relabel_configs", []),
                {"target_label": "job", "replacement": name},
            ]
            jobs.append(renamed)
    config = {"global": settings, "scrape_configs": jobs}
    return json.dumps(config, indent=2) + "\n"


class GlobalPrometheus:
    """A Prometheus on loopback that scrapes every lab given, each with its own cluster.

    Use as a context manager, or call ``start()`` / ``stop()``. Its process is recorded in
    ``<dir>/state.json``; ``stop()`` (idempotent, also registered with atexit) kills it.
    """

    def __init__(
        self, work_dir: Path, labs: Mapping[str, Path], bins: Binaries | None = None
    ) -> None:
        """``labs`` maps each lab's cluster value to its work dir."""
        if not labs:
            raise LabError("a global Prometheus needs at least one lab")
        self.dir = work_dir.resolve()
        self.labs = dict(labs)
        self.bins = bins or find_binaries()
        self.layout = Layout(self.dir)
        self.url = ""
        self._atexit_registered = False

    def __enter__(self) -> GlobalPrometheus:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        """Write the merged configuration, start Prometheus and wait until it is ready and
        holds a target of every lab; return its URL. On failure it is stopped again.
        """
        if procs.running_components(self.dir):
            raise LabError(f"a global Prometheus is already running in {self.dir}")
        if not self._atexit_registered:
            atexit.register(self.stop)
            self._atexit_registered = True
        self.dir.mkdir(parents=True, exist_ok=True)
        texts = {
            cluster: Layout(d).prometheus_config.read_text(encoding="utf-8")
            for cluster, d in self.labs.items()
        }
        self.layout.prometheus_config.write_text(global_prometheus_config(texts), encoding="utf-8")
        ep = comp.Endpoint(NAME, free_port(), "http")
        try:
            procs.spawn(self.dir, NAME, comp.prometheus_argv(self.bins, self.layout, ep))
            log = procs.component(self.dir, NAME)["log"]

            def ready() -> bool:
                if not procs.is_running(self.dir, NAME):
                    raise LabError(f"the global Prometheus exited; log tail:\n{tail(log)}")
                return http_ok(f"{ep.url}/-/ready")

            wait_for(
                ready,
                timeout_s=60,
                what="the global Prometheus ready",
                on_timeout=lambda: tail(log),
            )
            # Ready once it holds every lab: a reader that lists its clusters sees them all.
            wait_for(
                lambda: (
                    set(values_by(ep.url, "count by (cluster) (up)", "cluster")) >= set(self.labs)
                ),
                timeout_s=30,
                what=f"the global Prometheus holding {', '.join(sorted(self.labs))}",
            )
        except BaseException:
            self.stop()
            raise
        self.url = ep.url
        return self.url

    def stop(self) -> list[str]:
        """Kill the Prometheus (safe to call repeatedly); the names stopped."""
        return procs.stop_all(self.dir, [NAME])

    def running(self) -> Sequence[str]:
        """The recorded processes still alive (none after ``stop()``)."""
        return procs.running_components(self.dir)
