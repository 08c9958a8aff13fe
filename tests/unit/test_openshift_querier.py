"""``--prometheus auto`` on OpenShift: its Thanos Querier Route in openshift-monitoring,
read with the kubeconfig's own bearer token (the user's, as ``oc`` sends it)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from ktop.scrub import Secrets
from ktop.sources.live import reads
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.discovery import find_openshift_querier, route_url
from ktop.sources.live.prometheus_connect import (
    NO_KUBE_TOKEN,
    KubeAccess,
    PrometheusAuth,
    PrometheusConfigError,
    prometheus_client,
)
from ktop.sources.live.scrape import failure_reason
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi, status_body
from tests.unit.test_live_prometheus import FakeHttp, apiserver_answer, faked

ROUTE = {
    "apiVersion": "route.openshift.io/v1",
    "kind": "Route",
    "metadata": {"name": "thanos-querier", "namespace": "openshift-monitoring"},
    "spec": {
        "host": "thanos-querier-openshift-monitoring.apps.cell-a.example",
        "path": "/api",
        "port": {"targetPort": "web"},
        "tls": {"termination": "reencrypt", "insecureEdgeTerminationPolicy": "Redirect"},
        "to": {"kind": "Service", "name": "thanos-querier"},
    },
}
"""The route as OpenShift 4's monitoring operator creates it (its path is /api)."""


@pytest.mark.parametrize(
    ("route", "url"),
    [
        (ROUTE, "https://thanos-querier-openshift-monitoring.apps.cell-a.example"),
        ({"spec": {"host": "q.example"}}, "http://q.example"),
        ({"spec": {"host": "q.example", "path": "/", "tls": {}}}, "http://q.example"),
        ({"spec": {"host": "q.example", "tls": {"termination": "edge"}}}, "https://q.example"),
        ({"spec": {"path": "/api"}}, ""),
        ({"spec": {"host": ["q.example"]}}, ""),
        ({"spec": []}, ""),
    ],
)
def test_a_routes_url(route: dict[str, object], url: str) -> None:
    assert route_url(route) == url


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        (Answer(body=ROUTE), "https://thanos-querier-openshift-monitoring.apps.cell-a.example"),
        (Answer(404, status_body(404, "the server could not find the requested resource")), ""),
        (Answer(403, status_body(403, "routes is forbidden")), ""),
    ],
)
async def test_the_route_is_found_where_openshift_keeps_it(answer: Answer, found: str) -> None:
    def route(c: Call) -> Answer:
        assert c.path == reads.THANOS_QUERIER_ROUTE and reads.needed(c.path, c.verb)
        return answer

    api = FakeApi(route)
    assert await find_openshift_querier(KubeTransport(api, CostMeter())) == found  # type: ignore[arg-type]


def test_the_querier_is_sent_the_kubeconfigs_token() -> None:
    kube = KubeAccess("https://api.cell-a.example:6443", "/kube/ca.crt", None, lambda: "Bearer u")
    url = route_url(ROUTE)
    client = prometheus_client(url, CostMeter(), kube=kube, kube_bearer=True, secrets=Secrets())
    http = FakeHttp(apiserver_answer)
    faked(client, http)
    client.custom_query("up")
    sent = http.seen[0]
    assert urlsplit(str(sent.url)).netloc == urlsplit(url).netloc
    assert sent.headers["Authorization"] == "Bearer u"
    # the router's certificate is not the apiserver's: checked against the system's CAs
    assert client._session.verify is True


def test_a_token_given_for_prometheus_is_used_instead(tmp_path: object) -> None:
    kube = KubeAccess("https://api:6443", True, None, lambda: "Bearer kube")
    auth = PrometheusAuth(username="metrics")
    client = prometheus_client(
        route_url(ROUTE), CostMeter(), auth=auth, kube=kube, kube_bearer=True, secrets=Secrets()
    )
    http = FakeHttp(apiserver_answer)
    faked(client, http)
    client.custom_query("up")
    assert str(http.seen[0].headers["Authorization"]).startswith("Basic ")


def test_a_client_certificate_kubeconfig_is_told_what_to_give() -> None:
    kube = KubeAccess("https://api:6443", True, ("/c.pem", "/k.pem"), lambda: "")
    with pytest.raises(PrometheusConfigError) as err:
        prometheus_client(
            route_url(ROUTE), CostMeter(), kube=kube, kube_bearer=True, secrets=Secrets()
        )
    assert str(err.value) == NO_KUBE_TOKEN and "--prometheus-token-file" in NO_KUBE_TOKEN


def test_an_untrusted_certificate_is_said_plainly() -> None:
    """requests wraps it after the URL: the reason is found, not cut away."""
    wrapped = ConnectionError(
        "HTTPSConnectionPool(host='thanos-querier-openshift-monitoring.apps.cell-a.example', "
        "port=443): Max retries exceeded with url: /api/v1/query?query=time%28%29 (Caused by "
        "SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
        "verify failed: self-signed certificate in certificate chain (_ssl.c:1006)')))"
    )
    assert failure_reason(wrapped, Secrets()) == (
        "TLS: certificate verify failed: self-signed certificate in certificate chain (give its CA)"
    )
