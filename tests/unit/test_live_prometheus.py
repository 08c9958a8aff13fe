"""The Prometheus path with a fake HTTP transport: auth, the service proxy, counting,
failures, and per-instance APF totals without a phantom load-balanced row."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from prometheus_api_client import PrometheusConnect

from ktop.model.cluster import ClusterModel
from ktop.model.events import (
    FEED_SLO_DAY,
    LOAD_BALANCED,
    ApfDumpRead,
    ApfLevelDump,
    Area,
    Component,
    Event,
    FeedFailed,
    MetricsScraped,
    ScrapeFailed,
    SloDayCounted,
    Target,
)
from ktop.model.slo import SLOS
from ktop.scrub import Secrets
from ktop.sources.live import reads
from ktop.sources.live.cost import CostMeter
from ktop.sources.live.discovery import find_prometheus, prometheus_address
from ktop.sources.live.prometheus import PrometheusMetrics
from ktop.sources.live.prometheus_calls import PrometheusCalls
from ktop.sources.live.prometheus_connect import (
    KubeAccess,
    PrometheusAuth,
    PrometheusConfigError,
    prometheus_client,
)
from ktop.sources.live.prometheus_queries import SLO_DAY_RETRY_S
from ktop.sources.live.transport import KubeTransport
from tests.unit.fake_kube import Answer, Call, FakeApi

A, B = "10.0.0.1:6443", "10.0.0.2:6443"
EXEC = "apiserver_flowcontrol_current_executing_requests"
NOMINAL = "apiserver_flowcontrol_nominal_limit_seats"

# Per instance: (priority level, flow schema) -> executing, and level -> nominal seats.
EXECUTING = {A: {("exempt", "exempt"): 1.0, ("workload-low", "service-accounts"): 3.0},
             B: {("exempt", "exempt"): 1.0, ("workload-low", "service-accounts"): 2.0}}  # fmt: skip
SEATS = {A: {"exempt": 0.0, "workload-low": 98.0}, B: {"exempt": 0.0, "workload-low": 98.0}}


def vector(rows: list[tuple[dict[str, str], float]]) -> dict[str, Any]:
    result = [{"metric": m, "value": [1.0, str(v)]} for m, v in rows]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


PROM_TIME = 1_700_000_123.456
"""Prometheus' clock in these tests (ktop's own clock is elsewhere)."""


def apiserver_answer(query: str) -> dict[str, Any]:
    """What Prometheus would return for ktop's queries about two apiservers."""
    if query == "time()":
        return {"status": "success", "data": {"resultType": "scalar",
                                              "result": [PROM_TIME, str(PROM_TIME)]}}  # fmt: skip
    if query.startswith("up{") and "apiserver" in query:
        return vector([({"instance": A, "job": "apiserver"}, 1), ({"instance": B}, 1)])
    if query.startswith("sum by") and f"({EXEC}{{" in query:
        return vector([
            ({"instance": i, "priority_level": pl, "flow_schema": fs}, v)
            for i, flows in EXECUTING.items() for (pl, fs), v in flows.items()
        ])  # fmt: skip
    if query.startswith("sum by") and f"({NOMINAL}{{" in query:
        return vector([
            ({"instance": i, "priority_level": pl}, v)
            for i, levels in SEATS.items() for pl, v in levels.items()
        ])  # fmt: skip
    return vector([])


class FakeHttp(requests.adapters.BaseAdapter):
    """Answers requests in place of the network; records them."""

    def __init__(self, answer: Callable[[str], dict[str, Any]] | BaseException) -> None:
        super().__init__()
        self.answer = answer
        self.seen: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, **kw: Any) -> requests.Response:  # type: ignore[override]
        self.seen.append(request)
        if isinstance(self.answer, BaseException):
            raise self.answer
        query = parse_qs(urlsplit(str(request.url)).query).get("query", [""])[0]
        body = self.answer(query)
        resp = requests.Response()
        # as Prometheus answers a failed query: 503 for a timeout, 422 for other errors
        failed = body.get("status") == "error"
        resp.status_code = (503 if body.get("errorType") == "timeout" else 422) if failed else 200
        resp._content = json.dumps(body).encode()
        resp.url = str(request.url)
        resp.request = request
        return resp

    def close(self) -> None:
        pass


def faked(client: PrometheusConnect, http: FakeHttp) -> PrometheusConnect:
    client._session.mount(client.url, http)
    return client


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, events: Sequence[Event]) -> None:
        self.events.extend(events)


def test_bearer_token_file_and_ca_and_every_query_counted(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    meter = CostMeter()
    session = Secrets()
    client = prometheus_client(
        "https://prom.example:9090/",
        meter,
        auth=PrometheusAuth(bearer_token_file=str(token), ca="/etc/ca.pem"),
        secrets=session,
    )
    http = FakeHttp(apiserver_answer)
    faked(client, http)
    assert client._session.verify == "/etc/ca.pem"
    prom = PrometheusMetrics(client, "https://prom.example:9090", lambda: 7.0)
    emit = Recorder()

    async def poll() -> None:
        await prom.poll_once(emit)

    asyncio.run(poll())
    assert prom.healthy and prom.instances[Component.APISERVER] == {A, B}
    assert all(r.headers["Authorization"] == "Bearer s3cret" for r in http.seen)
    # The token read from the file is the session's secret: gone from any text it writes.
    said = "prometheus said: bad credential s3cret"
    assert "s3cret" in Secrets().scrub(said) and "s3cret" not in session.scrub(said)
    # Each query was one request, and the meter counted exactly those under "prometheus".
    assert len(http.seen) == prom.queries_total > 0
    assert meter.requests_by_destination == {"prometheus": len(http.seen)}
    assert meter.sent_by_destination == {"prometheus": len(http.seen)}
    scraped = {e.target: e for e in emit.events if isinstance(e, MetricsScraped)}
    assert set(scraped) == {Target(Component.APISERVER, A), Target(Component.APISERVER, B)}
    # One poll is one instant: Prometheus' own time first, then every query evaluated at it.
    params = [parse_qs(urlsplit(str(r.url)).query) for r in http.seen]
    assert params[0]["query"] == ["time()"] and "time" not in params[0]
    assert all(p["time"] == [f"{PROM_TIME:.3f}"] for p in params[1:])
    assert prom.evaluated_at == PROM_TIME


def test_per_level_totals_are_sums_over_real_instances_only() -> None:
    """Prometheus' two instances plus a stale load-balanced dump: nothing counted twice."""
    client = faked(
        prometheus_client("http://prom:9090", CostMeter(), secrets=Secrets()),
        FakeHttp(apiserver_answer),
    )
    prom = PrometheusMetrics(client, "http://prom:9090", lambda: 7.0)
    emit = Recorder()
    lb_dump = ApfDumpRead(6.0, LOAD_BALANCED, (ApfLevelDump("exempt", 0, False, False, 0, 1),))
    emit([lb_dump])
    asyncio.run(prom.poll_once(emit))
    model = ClusterModel()
    model.apply_all(emit.events)
    levels = {r.priority_level: r for r in model.snapshot().apf.levels}
    for pl in ("exempt", "workload-low"):
        want_exec = sum(v for flows in EXECUTING.values() for (p, _), v in flows.items() if p == pl)
        want_seats = sum(levels_[pl] for levels_ in SEATS.values())
        assert levels[pl].executing.value == want_exec
        assert levels[pl].seats_limit.value == want_seats
    assert LOAD_BALANCED not in {r.instance for r in model.snapshot().apf.per_instance}


def test_basic_auth_and_client_certificate() -> None:
    client = prometheus_client(
        "https://prom:9090",
        CostMeter(),
        auth=PrometheusAuth(username="ktop", cert="/c.pem", key="/k.pem", insecure=True),
        secrets=Secrets(),
    )
    http = FakeHttp(apiserver_answer)
    faked(client, http)
    client.custom_query("up")
    want = "Basic " + base64.b64encode(b"ktop:").decode()
    assert http.seen[0].headers["Authorization"] == want
    assert client._session.cert == ("/c.pem", "/k.pem") and client._session.verify is False


def test_service_proxy_uses_the_kubeconfig_credentials() -> None:
    kube = KubeAccess("https://lb.example:6443", "/kube/ca.crt", None, lambda: "Bearer kube")
    meter = CostMeter()
    client = prometheus_client(
        "k8s://monitoring/prometheus-k8s:web", meter, kube=kube, secrets=Secrets()
    )
    http = FakeHttp(apiserver_answer)
    faked(client, http)
    client.custom_query("up")
    url = urlsplit(str(http.seen[0].url))
    assert (url.scheme, url.netloc) == ("https", "lb.example:6443")
    assert (
        url.path == "/api/v1/namespaces/monitoring/services/prometheus-k8s:web/proxy/api/v1/query"
    )
    assert reads.needed(url.path, "get")
    assert http.seen[0].headers["Authorization"] == "Bearer kube"
    assert client._session.verify == "/kube/ca.crt"
    assert meter.requests_by_destination == {"prometheus via apiserver": 1}


@pytest.mark.parametrize(
    ("address", "auth", "message"),
    [
        ("prom:9090", None, r"expected an http\(s\)://"),
        ("k8s://monitoring", None, "expected k8s://NAMESPACE/SERVICE:PORT"),
        ("http://p:9090", PrometheusAuth(bearer_token_file="/t", username="u"), "one of a token"),
    ],
)
def test_bad_addresses_say_what_is_expected(
    address: str, auth: PrometheusAuth | None, message: str
) -> None:
    kube = KubeAccess("https://lb:6443", True, None, lambda: "")
    with pytest.raises(PrometheusConfigError, match=message):
        prometheus_client(address, CostMeter(), auth=auth, kube=kube, secrets=Secrets())


def test_failure_marks_every_seen_target_and_counts_the_attempt() -> None:
    meter = CostMeter()
    client = prometheus_client("http://prom:9090", meter, secrets=Secrets())
    http = FakeHttp(apiserver_answer)
    faked(client, http)
    prom = PrometheusMetrics(client, "http://prom:9090", lambda: 7.0)
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    http.answer = requests.ConnectionError("connection refused")
    asyncio.run(prom.poll_once(emit))
    failed = [e for e in emit.events if isinstance(e, ScrapeFailed)]
    assert {e.target.instance for e in failed} == {A, B}
    assert all("Prometheus at http://prom:9090 failed" in e.reason for e in failed)
    assert not prom.healthy and not prom.serves(Component.APISERVER, A)
    # The failed request was sent (counted as sent), but never answered.
    assert meter.requests_sent == meter.requests_total + 1


def test_blocking_calls_time_out_off_the_event_loop() -> None:
    release = threading.Event()
    calls = PrometheusCalls(workers=1, timeout_s=0.05)

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await calls.call(release.wait, 5.0)

    try:
        asyncio.run(main())
    finally:
        release.set()
        calls.close()


def test_an_abandoned_call_does_not_keep_the_process_from_exiting() -> None:
    """A call that outlives its timeout (a stuck range query) is abandoned: the program
    that gave up on it exits at once, rather than waiting for it as a thread pool would.
    """
    program = (
        "import asyncio, time\n"
        "from ktop.sources.live.prometheus import PrometheusCalls\n"
        "calls = PrometheusCalls(workers=1, timeout_s=0.1)\n"
        "async def main():\n"
        "    try:\n"
        "        await calls.call(time.sleep, 60)\n"
        "    except TimeoutError:\n"
        "        print('abandoned', flush=True)\n"
        "asyncio.run(main())\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=50, check=False
    )
    assert (done.returncode, done.stdout) == (0, "abandoned\n"), done.stderr
    assert time.monotonic() - started < 30


def test_calls_run_at_most_workers_at_a_time_and_pass_on_errors() -> None:
    calls = PrometheusCalls(workers=2, timeout_s=10)
    lock = threading.Lock()
    running: list[int] = [0, 0]  # now, most at once

    def work(i: int) -> int:
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        if i == 3:
            raise ValueError("bad answer")
        return i * i

    async def main() -> list[int | BaseException]:
        jobs = [calls.call(work, i) for i in range(6)]
        return list(await asyncio.gather(*jobs, return_exceptions=True))

    out = asyncio.run(main())
    assert out[:3] == [0, 1, 4] and out[4:] == [16, 25]
    assert isinstance(out[3], ValueError) and str(out[3]) == "bad answer"
    assert running[1] == 2


async def test_prometheus_found_in_cluster() -> None:
    services = {
        "operated-prometheus=true": [],
        "app.kubernetes.io/name=prometheus": [
            {
                "metadata": {"namespace": "monitoring", "name": "prometheus-k8s"},
                "spec": {"ports": [{"name": "reloader-web"}, {"name": "web"}]},
            }
        ],
    }

    def route(c: Call) -> Answer:
        assert c.path == reads.SERVICES and reads.needed(c.path, c.verb)
        return Answer(body={"items": services.get(c.query["labelSelector"], [])})

    api = FakeApi(route)
    found = await find_prometheus(KubeTransport(api, CostMeter()))  # type: ignore[arg-type]
    assert found == "k8s://monitoring/prometheus-k8s:web"
    assert prometheus_address([], ("web",)) == ""


# ------------------------------------------------------------- the day's SLO counts

SLI_BUCKET = "apiserver_request_sli_duration_seconds_bucket"
# Per instance, cumulative calls of the mutating SLO's verbs today, by bucket bound (as
# Prometheus writes it: "1.0" since 3.0, "1" before; both must be read).
DAY_BUCKETS = {
    A: {"0.5": 900.0, "1.0": 990.0, "2.0": 998.0, "+Inf": 1000.0},  # 10 slow of 1000
    B: {"0.5": 40.0, "1": 50.0, "+Inf": 50.0},  # none slow
}


def day_answer(query: str) -> dict[str, Any]:
    """Two apiservers as above, and their day's mutating calls (no read was counted)."""
    if f"increase({SLI_BUCKET}{{" in query:
        if 'verb=~"APPLY|DELETE|DELETECOLLECTION|PATCH|POST|PUT"' not in query:
            return vector([])
        return vector([
            ({"instance": i, "le": le}, v) for i, b in DAY_BUCKETS.items() for le, v in b.items()
        ])  # fmt: skip
    return apiserver_answer(query)


def day_queries(http: FakeHttp) -> list[str]:
    """The day queries the transport sent, in order."""
    queries = [parse_qs(urlsplit(str(r.url)).query)["query"][0] for r in http.seen]
    return [q for q in queries if "increase(" in q]


def test_the_days_slo_counts_are_read_every_five_minutes_from_midnight_utc() -> None:
    http = FakeHttp(day_answer)
    client = faked(prometheus_client("http://prom:9090", CostMeter(), secrets=Secrets()), http)
    prom = PrometheusMetrics(client, "http://prom:9090", lambda: 7.0)
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    days = {e.instance: e for e in emit.events if isinstance(e, SloDayCounted)}
    assert set(days) == {A, B}
    midnight = PROM_TIME - PROM_TIME % 86400
    assert all(d.since == midnight for d in days.values())
    assert days[A].counts == (("mutating", 10.0, 1000.0),)  # 1000 - 990 above 1 s
    assert days[B].counts == (("mutating", 0.0, 50.0),)
    # one query per SLO, over the seconds since 00:00 UTC, of the SLI (or its older name)
    sent = day_queries(http)
    seconds = int(PROM_TIME - midnight)
    assert len(sent) == len(SLOS) and all(f"[{seconds}s]" in q for q in sent)
    assert all(" or " in q and "apiserver_request_slo_duration_seconds_bucket" in q for q in sent)
    assert 'scope="namespace"' in sent[2] and "scope" not in sent[0]
    # the next poll, within five minutes, does not ask again
    asyncio.run(prom.poll_once(emit))
    assert len(day_queries(http)) == len(SLOS)
    # in the model: the budget burned today, 10 / 1000 / 1 %
    model = ClusterModel()
    model.apply_all(emit.events)
    rows = {r.instance: r for r in model.snapshot().apiservers.instances}
    mutating = rows[A].slos[0]
    assert mutating.budget_today and mutating.budget_burned.value == pytest.approx(1.0)


def test_a_failed_day_query_is_shown_retried_within_a_minute_and_cleared_on_success() -> None:
    now = [PROM_TIME]
    down = [True]

    def answer(query: str) -> dict[str, Any]:
        if query == "time()":
            return {"status": "success", "data": {"resultType": "scalar",
                                                  "result": [now[0], str(now[0])]}}  # fmt: skip
        if "increase(" in query and down[0]:
            return {"status": "error", "errorType": "timeout", "error": "query timed out"}
        return day_answer(query)

    http = FakeHttp(answer)
    client = faked(prometheus_client("http://prom:9090", CostMeter(), secrets=Secrets()), http)
    prom = PrometheusMetrics(client, "http://prom:9090", lambda: 7.0)
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    assert prom.healthy  # the metrics still count
    assert not [e for e in emit.events if isinstance(e, SloDayCounted)]
    assert any(isinstance(e, MetricsScraped) for e in emit.events)
    failed = [e for e in emit.events if isinstance(e, FeedFailed)]
    assert [f.feed for f in failed] == [FEED_SLO_DAY] and "query timed out" in failed[0].reason
    # the apiservers area says what failed, beside ktop's own count
    model = ClusterModel()
    model.apply_all(emit.events)
    shown = [f for f in model.snapshot().freshness if f.name == FEED_SLO_DAY]
    assert shown and "query timed out" in shown[0].error
    assert shown[0].area is Area.APISERVERS
    asked = len(day_queries(http))
    # not asked again before the retry delay; asked once it has passed, and read
    now[0] += SLO_DAY_RETRY_S - 1
    asyncio.run(prom.poll_once(emit))
    assert len(day_queries(http)) == asked
    down[0] = False
    now[0] += 1
    emit.events.clear()
    asyncio.run(prom.poll_once(emit))
    assert len(day_queries(http)) == asked + len(SLOS)
    model.apply_all(emit.events)
    assert {e.instance for e in emit.events if isinstance(e, SloDayCounted)} == {A, B}
    shown = [f for f in model.snapshot().freshness if f.name == FEED_SLO_DAY]
    assert shown and not shown[0].error
    # read: the next read is five minutes on, not one
    now[0] += SLO_DAY_RETRY_S
    asyncio.run(prom.poll_once(emit))
    assert len(day_queries(http)) == asked + len(SLOS)


def test_the_days_counts_name_a_given_apiserver_as_its_row_and_drop_the_others() -> None:
    """--apiserver https://kube.example:6443, which Prometheus labels 10.0.0.1:6443."""
    client = faked(
        prometheus_client("http://prom:9090", CostMeter(), secrets=Secrets()), FakeHttp(day_answer)
    )
    prom = PrometheusMetrics(
        client,
        "http://prom:9090",
        lambda: 7.0,
        apiservers=("kube.example:6443",),
        resolve=lambda host: frozenset({"10.0.0.1"} if host == "kube.example" else ()),
    )
    emit = Recorder()
    asyncio.run(prom.poll_once(emit))
    days = [e for e in emit.events if isinstance(e, SloDayCounted)]
    assert [(d.instance, d.counts) for d in days] == [
        ("kube.example:6443", (("mutating", 10.0, 1000.0),))
    ]
