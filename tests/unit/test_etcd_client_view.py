"""etcd as the apiserver sees it, from a real kube-apiserver 1.35 scrape, checked against
prometheus_client's parser and an independent quantile walk."""

from __future__ import annotations

import pytest

from ktop.model.cluster import ClusterModel
from ktop.model.events import Component, MetricsScraped, Sample, Target
from ktop.model.snapshot_etcd import EtcdView
from tests.unit.test_model_fixtures import _hist, _independent_quantile, _model, _samples, _text

FIXTURE = "nri-k8s-1.35_kube-apiserver_metrics.prom"


def test_apiserver_view_matches_independent_reading() -> None:
    text = _text(FIXTURE)
    etcd = _model(Component.APISERVER, FIXTURE).snapshot().etcd
    view = etcd.apiserver_view
    assert view is not None and view.unknown_reason == ""
    # No member was read: the pane shows the apiserver view, and says the members' reason.
    assert etcd.view is EtcdView.APISERVER and etcd.unknown_reason
    (row,) = view.instances
    assert row.storage_bytes.value == _samples(text, "apiserver_storage_size_bytes")[0][1]
    for q, val in ((0.5, row.p50_s), (0.99, row.p99_s)):
        expected = _independent_quantile(q, _hist(text, "etcd_request_duration_seconds"))
        assert val.lifetime and val.value == pytest.approx(expected)
    # One scrape gives no rate: unknown with the reason, not zero.
    assert not row.requests_per_s.known and row.requests_per_s.reason == "needs two scrapes"
    # Per resource and operation, p99 from that series' own buckets.
    by = {(r.resource, r.operation): r for r in view.requests}
    expected = _independent_quantile(
        0.99,
        _hist(text, "etcd_request_duration_seconds", resource="configmaps", operation="create"),
    )
    assert by[("configmaps", "create")].p99_s.value == pytest.approx(expected)
    leases = _hist(
        text,
        "etcd_request_duration_seconds",
        resource="leases",
        group="coordination.k8s.io",
        operation="get",
    )
    assert by[("leases.coordination.k8s.io", "get")].p99_s.value == pytest.approx(
        _independent_quantile(0.99, leases)
    )
    # Object counts equal the exposition's, largest first.
    objects = {lb["resource"]: v for lb, v in _samples(text, "apiserver_storage_objects")}
    assert {name: v.value for name, v in view.objects} == objects
    counts = [v.value or 0.0 for _, v in view.objects]
    assert counts == sorted(counts, reverse=True)


def _scrape(at: float, instance: str, requests: float, errors: float) -> MetricsScraped:
    labels = (("operation", "get"), ("type", "*core.Pod"))  # the labels before 1.34
    samples = (
        Sample("etcd_requests_total", labels, requests),
        Sample("etcd_request_errors_total", labels, errors),
        Sample("apiserver_storage_db_total_size_in_bytes", (("endpoint", "e0"),), 5e6),
        Sample("apiserver_storage_objects", (("resource", "pods"),), -1),
    )
    return MetricsScraped(at, Target(Component.APISERVER, instance), samples)


def test_rates_errors_and_older_labels_summed_over_instances() -> None:
    m = ClusterModel()
    m.apply_all([_scrape(0, "a", 100, 0), _scrape(0, "b", 10, 0)])
    m.apply_all([_scrape(10, "a", 150, 2), _scrape(10, "b", 30, 0)])
    view = m.snapshot().etcd.apiserver_view
    assert view is not None
    rates = {r.instance: (r.requests_per_s.value, r.errors_per_s.value) for r in view.instances}
    assert rates == {"a": (5.0, 0.2), "b": (2.0, 0.0)}
    (req,) = view.requests
    assert (req.resource, req.operation) == ("*core.Pod", "get")
    assert (req.requests_per_s.value, req.errors_per_s.value) == (7.0, 0.2)
    assert view.storage_bytes.value == 5e6  # the pre-1.28 name, per endpoint
    # -1 means the apiserver could not count: unknown with the reason, never -1.
    assert dict(view.objects)["pods"].reason == "the apiserver could not count them"
