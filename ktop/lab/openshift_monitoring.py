"""OpenShift's cluster monitoring stack as a client finds it, for a lab
(``LabConfig.openshift_layout`` with Prometheus): the ``openshift-monitoring`` namespace,
the Route kind (a CRD here; OpenShift's own API server serves it there), the
``thanos-querier`` Route to the lab's stand-in proxy (``ktop/lab/thanos_querier.py``),
and the ``cluster-monitoring-view`` ClusterRole a user needs to query it.
"""

from __future__ import annotations

import asyncio

from kubernetes_asyncio import client

from ktop.lab.kube import body, created, schemaless_crd
from ktop.lab.util import LabError

NAMESPACE = "openshift-monitoring"
ROUTE_NAME = "thanos-querier"
VIEW_ROLE = "cluster-monitoring-view"
"""The ClusterRole OpenShift grants for reading cluster metrics."""

ROUTE_CRD = schemaless_crd("route.openshift.io", "Route", "routes", "Namespaced")


def route(host: str) -> dict[str, object]:
    """The Route as OpenShift's monitoring operator writes it, to ``host`` (HOST:PORT)."""
    return {
        "apiVersion": "route.openshift.io/v1",
        "kind": "Route",
        "metadata": {"name": ROUTE_NAME, "namespace": NAMESPACE},
        "spec": {
            "host": host,
            "path": "/api",
            "port": {"targetPort": "web"},
            "tls": {"termination": "reencrypt", "insecureEdgeTerminationPolicy": "Redirect"},
            "to": {"kind": "Service", "name": ROUTE_NAME, "weight": 100},
            "wildcardPolicy": "None",
        },
    }


VIEW = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": VIEW_ROLE},
    "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}],
}
"""What the proxy checks of ``cluster-monitoring-view`` (OpenShift's has more)."""


async def serve_monitoring_route(api: client.ApiClient, host: str) -> None:
    """Create the namespace, the Route CRD, the Route to ``host`` and the view role
    (idempotent); returns once the Route can be read.
    """
    ext = client.ApiextensionsV1Api(api)
    core = client.CoreV1Api(api)
    await created(
        core.create_namespace(body({"metadata": {"name": NAMESPACE}})),
        ext.create_custom_resource_definition(body(ROUTE_CRD)),
        client.RbacAuthorizationV1Api(api).create_cluster_role(body(VIEW)),
    )
    custom = client.CustomObjectsApi(api)
    for _ in range(120):
        try:
            await created(
                custom.create_namespaced_custom_object(
                    "route.openshift.io", "v1", NAMESPACE, "routes", body(route(host))
                )
            )
            return
        except client.ApiException as exc:
            if exc.status != 404:  # the CRD is not served yet
                raise
        await asyncio.sleep(0.5)
    raise LabError("the apiservers never served route.openshift.io/v1 routes")
