"""What the live source reads and how often: :class:`LiveOptions` (defaults are what
docs/cost.md assumes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ktop.model.series import WINDOW_S
from ktop.model.snapshot import first_data_due_s
from ktop.sources.live import DEFAULT_CLUSTER_LABEL
from ktop.sources.live.components import TlsFiles
from ktop.sources.live.prometheus_connect import PrometheusAuth
from ktop.sources.live.timing import BACKFILL_TIMEOUT_S, FIRST_POLL_WAIT_S


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """What to read and how often (defaults are what docs/cost.md assumes)."""

    kubeconfig: str | None = None
    context: str | None = None
    rack_label: str = "topology.ktop.dev/rack"
    apiserver_scrape_s: float = 15.0
    apf_dump_s: float = 15.0
    discovery_s: float = 60.0
    node_detail_per_s: float = 5.0
    node_detail_max: int = 500
    prometheus: str | None = None
    """A URL, ``k8s://NAMESPACE/SERVICE:PORT``, or ``auto``."""
    window_s: float = WINDOW_S
    """The model's observation window: the Prometheus backfill reads this much raw data."""
    prometheus_auth: PrometheusAuth = field(default_factory=PrometheusAuth)
    prometheus_s: float = 15.0
    etcd_metrics: tuple[str, ...] = ()
    etcd_tls: TlsFiles = field(default_factory=TlsFiles)
    scheduler_metrics: tuple[str, ...] = ()
    controller_manager_metrics: tuple[str, ...] = ()
    component_tls: TlsFiles = field(default_factory=TlsFiles)
    component_scrape_s: float = 15.0
    find_components: bool = True
    """Find components not given by URL as static pods, through the pod proxy."""
    provider: str | None = None
    """``--provider``: who runs the control plane, instead of detecting it."""
    apiservers: tuple[str, ...] = ()
    """Instance base URLs to use instead of discovering them."""
    watch_timeout_s: int = 300
    metrics_only: bool = False
    """No node, Lease or pod reads (and no other watch): nodes, zones and pending pods
    from the control plane's metrics."""
    cluster_label: str = DEFAULT_CLUSTER_LABEL
    """The label that names a cluster in a Prometheus that holds many."""
    cluster: str | None = None
    """Read only this cluster's series from Prometheus (matcher ``CLUSTER_LABEL="CLUSTER"``)."""
    lease_round_s: float = 10.0
    leases_per_round: int = 200
    """Node Leases are sampled, not watched: this many in rotation every ``lease_round_s``,
    plus those of not-Ready and lagging nodes (``leases.py``)."""

    @property
    def first_data_due_s(self) -> float:
        """How long after the start every pane's first data is due: twice the slowest
        cadence read (:func:`ktop.model.snapshot.first_data_due_s`); with Prometheus, not
        before its start-up waits are over (its first answer and the history backfill,
        which the apiserver discovery waits for).
        """
        cadences = [
            self.apiserver_scrape_s,
            self.apf_dump_s,
            self.component_scrape_s,
            self.lease_round_s,
        ]
        if self.prometheus:
            cadences.append(self.prometheus_s)
        due = first_data_due_s(cadences)
        return max(due, FIRST_POLL_WAIT_S + BACKFILL_TIMEOUT_S) if self.prometheus else due

    @property
    def without_kubeconfig(self) -> bool:
        """Prometheus by URL, one of its clusters or metrics-only, and no kubeconfig or
        context given: read Prometheus only (metrics-only implied).
        """
        given = self.kubeconfig or self.context
        by_url = (self.prometheus or "").startswith(("http://", "https://"))
        return by_url and not given and (self.metrics_only or self.cluster is not None)

    @property
    def metrics_only_why(self) -> str:
        """Why the source reads no objects (empty when it reads them)."""
        if self.without_kubeconfig:
            return "no kubeconfig: Prometheus only"
        return "--metrics-only" if self.metrics_only else ""
