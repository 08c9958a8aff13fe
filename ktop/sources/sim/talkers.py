"""Who sends the simulated traffic: the clients behind each flow schema, and what one
apiserver's ``dump_requests?includeRequestDetails=1`` would list for them.

The APF model (:mod:`.apf`) is fluid, per flow schema; here each flow's executing
seats and queued requests are split between its clients in proportion to the seats
each one asks for. The relist storm of ``apf-saturation`` comes from one client,
:data:`STORM_USER`, listing pods: during the storm it holds most of workload-low.
"""

from __future__ import annotations

from dataclasses import dataclass

from ktop.model.events import ApfTalker
from ktop.sources.sim.apf import Apf
from ktop.sources.sim.catalog import STORM_FLOW, STORM_SEATS


@dataclass(frozen=True, slots=True)
class Client:
    """One client of a flow schema: its user, flow distinguisher, share and usual call."""

    user: str
    distinguisher: str
    share: float
    what: str


def _sa(ns: str, name: str) -> str:
    return f"system:serviceaccount:{ns}:{name}"


_KCM = "system:kube-controller-manager"
STORM_USER = _sa("batch", "reporter")
"""The client whose relists flood workload-low in ``apf-saturation``."""
STORM_WHAT = "list pods"

CLIENTS: dict[str, tuple[Client, ...]] = {
    "exempt": (
        Client("system:apiserver", "", 0.7, "get leases"),
        Client("kubernetes-admin", "", 0.3, "get pods"),
    ),
    "probes": (Client("system:anonymous", "", 1.0, "get"),),
    "system-leader-election": (
        Client(
            "system:kube-controller-manager", "system:kube-controller-manager", 0.5, "put leases"
        ),
        Client("system:kube-scheduler", "system:kube-scheduler", 0.5, "put leases"),
    ),
    "workload-leader-election": (
        Client(
            _sa("kube-system", "cloud-controller-manager"),
            _sa("kube-system", "cloud-controller-manager"),
            1.0,
            "put leases",
        ),
    ),
    "endpoint-controller": (
        Client(
            _sa("kube-system", "endpointslice-controller"),
            _sa("kube-system", "endpointslice-controller"),
            1.0,
            "put endpointslices",
        ),
    ),
    "system-node-high": (Client("system:nodes", "system:nodes", 1.0, "patch nodes/status"),),
    "system-nodes": (Client("system:nodes", "system:nodes", 1.0, "get configmaps"),),
    "kube-controller-manager": (Client(_KCM, _KCM, 1.0, "get pods"),),
    "kube-scheduler": (
        Client("system:kube-scheduler", "system:kube-scheduler", 1.0, "create pods/binding"),
    ),
    "kube-system-service-accounts": (
        Client(_sa("kube-system", "kube-proxy"), "kube-system", 0.6, "watch endpointslices"),
        Client(_sa("kube-system", "coredns"), "kube-system", 0.4, "watch services"),
    ),
    "service-accounts": (
        Client(_sa("monitoring", "prometheus"), _sa("monitoring", "prometheus"), 0.35, "get pods"),
        Client(
            _sa("ingress", "ingress-nginx"), _sa("ingress", "ingress-nginx"), 0.35, "get services"
        ),
        Client(_sa("batch", "job-runner"), _sa("batch", "job-runner"), 0.3, "create jobs"),
    ),
    "global-default": (
        Client("alice@example.com", "alice@example.com", 0.5, "get deployments"),
        Client("ci-deployer", "ci-deployer", 0.5, "patch deployments"),
    ),
    "catch-all": (Client("system:anonymous", "system:anonymous", 1.0, "get"),),
}
"""The clients of every simulated flow schema (node clients are shown as one,
``system:nodes``, rather than one user per node)."""


def talkers(apf: Apf, storm_share: float) -> tuple[ApfTalker, ...]:
    """What one apiserver's request dump lists now, folded per client.

    ``storm_share`` is the part of :data:`~.catalog.STORM_FLOW`'s seat demand that is
    the storm's (0 outside it).
    """
    out: list[ApfTalker] = []
    for name, st in apf.flows.items():
        seats, waiting = st.seats, st.inqueue
        if seats < 0.5 and waiting < 0.5:
            continue
        clients = list(CLIENTS.get(name, ()))
        shares = [c.share for c in clients]
        if name == STORM_FLOW and storm_share > 0:
            shares = [s * (1 - storm_share) for s in shares]
            clients.append(Client(STORM_USER, STORM_USER, storm_share, STORM_WHAT))
            shares.append(storm_share)
        for c, share in zip(clients, shares, strict=True):
            held, queued = round(seats * share), round(waiting * share)
            if held <= 0 and queued <= 0:
                continue
            per_request = STORM_SEATS if c.user == STORM_USER else 1.0
            out.append(
                ApfTalker(
                    priority_level=st.level,
                    flow_schema=name,
                    user=c.user,
                    distinguisher=c.distinguisher,
                    executing=max(1, round(held / per_request)) if held else 0,
                    executing_seats=held,
                    waiting=queued,
                    waiting_seats=round(queued * per_request),
                    oldest_wait_s=round(st.cohorts[0][0], 3) if queued and st.cohorts else 0.0,
                    what=c.what,
                )
            )
    out.sort(key=lambda t: (-(t.executing_seats + t.waiting_seats), t.priority_level, t.user))
    return tuple(out)
