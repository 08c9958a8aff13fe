"""Start and stop a whole lab control plane on loopback."""

from __future__ import annotations

import asyncio
import atexit
import json
import secrets
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ktop.lab import components as comp
from ktop.lab import hosts, kube, procs
from ktop.lab.binaries import Binaries, find_binaries
from ktop.lab.config import CONTEXT, LOW_USER, LabConfig, Layout, Tokens, write_kubeconfig
from ktop.lab.control_plane import (
    CONTROL_PLANE_HOSTS,
    KUBEADM_PODS,
    OPENSHIFT_PODS,
    OPENSHIFT_SCHEDULER_NS,
    control_plane_nodes,
    control_plane_pods,
    kubeadm_endpoints,
    node_of,
)
from ktop.lab.openshift_monitoring import serve_monitoring_route
from ktop.lab.pki import write_pki
from ktop.lab.util import LabError, free_ports, http_get, http_ok, tail, wait_for

EKS_METRICS_PORT = 10443
"""Where the lab's EKS metrics API backend listens, on its last control-plane host."""
THANOS_QUERIER_PORT = 10444
"""Where the lab's Thanos Querier stand-in listens (OpenShift layout), on that host."""

#: stop order: load generators and clients first, storage last
STOP_ORDER_PREFIXES = (
    "eks-metrics",
    "thanos-querier",
    "prometheus",
    "kwok-",
    "kube-scheduler",
    "kube-controller-manager",
    "apiserver-",
    "etcd-",
)


def _log(msg: str) -> None:
    print(f"[ktop.lab {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def stop_lab(lab_dir: Path) -> list[str]:
    """Stop every process of the lab in `lab_dir` and remove its host addresses (safe to
    call repeatedly).
    """
    state = procs.read_state(lab_dir)
    names = list(state["components"])
    order = [n for prefix in STOP_ORDER_PREFIXES for n in names if n.startswith(prefix)]
    stopped = procs.stop_all(lab_dir, order)
    if state.get("hosts"):
        hosts.release(list(state["hosts"]))
        procs.update_state(lab_dir, hosts=[])
    return stopped


def load_info(lab_dir: Path) -> dict[str, Any]:
    """The cluster-info.json of a lab dir."""
    info: dict[str, Any] = json.loads((Layout(lab_dir).cluster_info).read_text(encoding="utf-8"))
    return info


class Lab:
    """A real control plane on 127.0.0.1: etcd (1 or 3), two kube-apiservers, scheduler,
    controller-manager, one kwok per zone managing fake nodes, and Prometheus.

    Use as a context manager, or call `start()` / `stop()`. Every process is recorded in
    `<dir>/state.json`; `stop()` (also registered with atexit) kills them all.
    """

    def __init__(self, lab_dir: Path, cfg: LabConfig | None = None, bins: Binaries | None = None):
        self.dir = lab_dir.resolve()
        self.cfg = cfg or LabConfig()
        self.bins = bins or find_binaries()
        self.layout = Layout(self.dir)
        self.info: dict[str, Any] = {}
        self._atexit_registered = False
        self._last_ready = (-1, -1)
        self.hosts: list[str] = []
        """The control-plane hosts' addresses (kubeadm-like labs; ``ktop/lab/hosts.py``)."""
        self._endpoints: tuple[Any, ...] = ()

    # -- lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> Lab:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Kill every lab process (idempotent)."""
        stopped = stop_lab(self.dir)
        if stopped:
            _log(f"stopped {', '.join(stopped)}")

    def start(self) -> dict[str, Any]:
        """Start everything and wait until it is ready; on failure stop what was started."""
        if procs.running_components(self.dir):
            raise LabError(
                f"a lab is already running in {self.dir}; "
                f"run `python -m ktop.lab down --dir {self.dir}`"
            )
        if not self._atexit_registered:
            atexit.register(self.stop)
            self._atexit_registered = True
            _exit_cleanly_on_sigterm()
        started = time.monotonic()
        try:
            self._start()
        except BaseException:
            _log("start failed; stopping what was started")
            self.stop()
            raise
        self.info["start_seconds"] = round(time.monotonic() - started, 1)
        self._write_info()
        _log(f"lab ready in {self.info['start_seconds']}s: kubeconfig {self.layout.kubeconfig}")
        return self.info

    # -- steps ---------------------------------------------------------------------------
    def _start(self) -> None:
        cfg, layout, bins = self.cfg, self.layout, self.bins
        for sub in ("data", "logs", "kubeconfigs", "pki"):
            shutil.rmtree(self.dir / sub, ignore_errors=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "state.json").unlink(missing_ok=True)

        n_etcd = cfg.etcd_members
        if cfg.kubeadm_hosts:
            self.hosts = hosts.claim(CONTROL_PLANE_HOSTS)
            procs.update_state(self.dir, hosts=self.hosts)
            etcd, apis, sched, kcm = kubeadm_endpoints(self.hosts, n_etcd)
            ports = iter(free_ports(len(cfg.zones) + 1))
        else:
            ports = iter(free_ports(2 * n_etcd + 2 + 2 + len(cfg.zones) + 1))
            etcd = [comp.EtcdMember(f"etcd-{i}", next(ports), next(ports)) for i in range(n_etcd)]
            apis = [
                comp.Endpoint("apiserver-a", next(ports)),
                comp.Endpoint("apiserver-b", next(ports)),
            ]
            sched = comp.Endpoint("kube-scheduler", next(ports))
            kcm = comp.Endpoint("kube-controller-manager", next(ports))
        kwoks = {z: comp.Endpoint(f"kwok-{z}", next(ports), "http") for z in cfg.zones}
        prom = comp.Endpoint("prometheus", next(ports), "http")
        self._endpoints = (etcd, apis, sched, kcm)

        write_pki(layout.pki, tuple(self.hosts))
        users = ["system:kube-scheduler", "system:kube-controller-manager"]
        users += [f"kwok-controller-{z}" for z in cfg.zones]
        tokens = Tokens.generate(users)
        tokens.write_csv(layout.tokens_file)
        layout.audit_policy.write_text(comp.AUDIT_POLICY, encoding="utf-8")
        (self.dir / "admin.token").write_text(tokens.admin, encoding="utf-8")
        (self.dir / "admin.token").chmod(0o600)
        ca = layout.pki / "ca.crt"
        write_kubeconfig(
            layout.kubeconfig,
            server=apis[0].url,
            token=tokens.admin,
            ca_file=ca,
            extra_servers={f"{CONTEXT}-apiserver-b": apis[1].url},
        )
        # Spread clients over both apiservers, like a load balancer would.
        write_kubeconfig(
            layout.component_kubeconfig("kube-controller-manager"),
            server=apis[0].url,
            token=tokens.components["system:kube-controller-manager"],
            ca_file=ca,
        )
        write_kubeconfig(
            layout.component_kubeconfig("kube-scheduler"),
            server=apis[1].url,
            token=tokens.components["system:kube-scheduler"],
            ca_file=ca,
        )
        for i, (zone, ep) in enumerate(kwoks.items()):
            write_kubeconfig(
                layout.component_kubeconfig(ep.name),
                server=apis[i % 2].url,
                token=tokens.components[f"kwok-controller-{zone}"],
                ca_file=ca,
            )
        comp.write_stages(layout)
        layout.prometheus_config.write_text(
            comp.prometheus_config(layout, apis, etcd, sched, kcm, kwoks, prom, cfg.cluster),
            encoding="utf-8",
        )
        lab_id = secrets.token_hex(8)
        self.info = {
            "lab_id": lab_id,
            "dir": str(self.dir),
            "kubeconfig": str(layout.kubeconfig),
            "context": CONTEXT,
            "apiservers": [{"name": a.name, "url": a.url} for a in apis],
            "etcd": [
                {
                    "name": m.name,
                    "client_url": m.client_url,
                    "peer_url": m.peer_url,
                    "metrics_url": m.metrics_url,
                }
                for m in etcd
            ],
            "scheduler": {"name": sched.name, "metrics_url": f"{sched.url}/metrics"},
            "controller_manager": {"name": kcm.name, "metrics_url": f"{kcm.url}/metrics"},
            "kwok": [
                {"zone": z, "name": ep.name, "metrics_url": f"{ep.url}/metrics"}
                for z, ep in kwoks.items()
            ],
            "prometheus_url": prom.url if cfg.prometheus else None,
            "tokens_file": str(layout.tokens_file),
            "audit_logs": [str(layout.audit_log(a.name)) for a in apis] if cfg.audit_log else [],
            "admin_token": tokens.admin,
            "low_user": {"name": LOW_USER, "token": tokens.low},
            "zones": list(cfg.zones),
            "nodes": cfg.nodes,
            "control_plane_hosts": {node_of(h): h for h in self.hosts},
            "config": asdict(cfg),
        }
        self._write_info()
        procs.update_state(self.dir, lab_id=lab_id)

        _log(f"starting {n_etcd} etcd member(s)")
        for m in etcd:
            argv = comp.etcd_argv(bins, layout, m, etcd, unsafe_no_fsync=cfg.etcd_unsafe_no_fsync)
            self._spawn(m.name, self._on_host(m.host, argv))
        for m in etcd:
            self._wait(m.name, lambda m=m: _etcd_healthy(m.client_url), 60)

        _log("starting 2 kube-apiservers")
        for i, a in enumerate(apis):
            # Apiservers at one address must leave the `kubernetes` endpoints to one of them.
            reconcile = i == 0 or cfg.kubeadm_hosts
            argv = comp.apiserver_argv(bins, layout, cfg, a, etcd, reconcile_endpoints=reconcile)
            self._spawn(a.name, self._on_host(a.host, argv))
        for a in apis:
            self._wait(a.name, lambda a=a: http_ok(f"{a.url}/readyz", tokens.admin), 120)

        _log(f"creating {cfg.nodes} fake nodes and the lab marker")
        asyncio.run(self._seed(lab_id))

        _log(f"starting scheduler, controller-manager, kwok x{len(kwoks)}, prometheus")
        kcm_argv = comp.controller_manager_argv(bins, layout, cfg, kcm)
        self._spawn(kcm.name, self._on_host(kcm.host, kcm_argv, restart=True))
        lease_ns = OPENSHIFT_SCHEDULER_NS if cfg.openshift_layout else ""
        sched_argv = comp.scheduler_argv(
            bins, layout, sched, kubeadm=cfg.kubeadm_hosts, lease_ns=lease_ns
        )
        self._spawn(sched.name, self._on_host(sched.host, sched_argv, restart=True))
        for i, (zone, ep) in enumerate(kwoks.items()):
            self._spawn(ep.name, comp.kwok_argv(bins, layout, cfg, zone, i, ep))
        if cfg.prometheus:
            self._spawn(prom.name, comp.prometheus_argv(bins, layout, prom))

        self._wait(kcm.name, lambda: http_ok(f"{kcm.url}/healthz", tokens.admin), 60)
        self._wait(sched.name, lambda: http_ok(f"{sched.url}/healthz", tokens.admin), 60)
        if cfg.eks_layout:
            self._start_eks_metrics(sched, kcm)
        if cfg.prometheus:
            self._wait(prom.name, lambda: http_ok(f"{prom.url}/-/ready"), 60)
            if cfg.openshift_layout:
                self._start_thanos_querier(prom.url)
        _log("waiting for all nodes Ready")
        wait_for(
            lambda: asyncio.run(self._all_ready()),
            timeout_s=cfg.start_timeout_s,
            what=f"{cfg.nodes} nodes Ready",
            interval_s=1.0,
            on_timeout=lambda: "\n".join(
                tail(str(self.dir / "logs" / f"{ep.name}.log"), 10) for ep in kwoks.values()
            ),
        )
        # Every kwok must serve (a crash after start would otherwise go unnoticed).
        for ep in kwoks.values():
            self._check_alive(ep.name)

    async def _seed(self, lab_id: str) -> None:
        async with kube.api_client(self.layout.kubeconfig) as api:
            await kube.write_marker(api, lab_id)
            await kube.grant_low_user_read(api)
            manifests = kube.fake_node_manifests(
                self.cfg.nodes, self.cfg.zones, self.cfg.racks_per_zone
            )
            await kube.create_nodes(api, manifests)
            if self.cfg.kubeadm_hosts:
                etcd, apis, sched, kcm = self._endpoints
                style = OPENSHIFT_PODS if self.cfg.openshift_layout else KUBEADM_PODS
                pods = control_plane_pods(self.hosts, etcd, apis, sched, kcm, style)
                await kube.create_control_plane(
                    api,
                    control_plane_nodes(self.hosts, self.cfg.zones),
                    [] if self.cfg.eks_layout else pods,  # EKS shows no component pod
                )
                if self.cfg.openshift_layout:
                    await kube.serve_openshift_config_group(api)

    async def _all_ready(self) -> bool:
        for ep_name in (f"kwok-{z}" for z in self.cfg.zones):
            self._check_alive(ep_name)
        async with kube.api_client(self.layout.kubeconfig) as api:
            ready, total = await kube.ready_node_count(api)
        if (ready, total) != self._last_ready:
            self._last_ready = (ready, total)
            _log(f"{ready}/{total} nodes Ready without condition taints")
        return total >= self.cfg.nodes and ready == total

    def _start_eks_metrics(self, sched: comp.Endpoint, kcm: comp.Endpoint) -> None:
        """The scheduler's and controller-manager's metrics as EKS serves them: the
        aggregated API's backend on the last control-plane host, registered with the
        apiservers (``ktop/lab/eks_metrics.py``).
        """
        host, pki = self.hosts[-1], self.layout.pki
        argv = [
            sys.executable, "-m", "ktop.lab.eks_metrics",
            f"--listen={host}:{EKS_METRICS_PORT}",
            f"--cert={pki / 'extension.crt'}", f"--key={pki / 'extension.key'}",
            f"--scheduler={sched.url}/metrics", f"--controller-manager={kcm.url}/metrics",
        ]  # fmt: skip
        self._spawn("eks-metrics", argv)
        probe = f"https://{host}:{EKS_METRICS_PORT}/apis/metrics.eks.amazonaws.com/v1"
        self._wait("eks-metrics", lambda: http_ok(probe), 30)
        ca = (pki / "ca.crt").read_bytes()

        async def register() -> None:
            async with kube.api_client(self.layout.kubeconfig) as api:
                await kube.register_eks_metrics(api, host, EKS_METRICS_PORT, ca)

        asyncio.run(register())

    def _start_thanos_querier(self, prometheus: str) -> None:
        """OpenShift's query endpoint: the auth proxy in front of the lab's Prometheus on
        the last control-plane host, its Route and the view role
        (``ktop/lab/thanos_querier.py``, ``ktop/lab/openshift_monitoring.py``).
        """
        host, pki = self.hosts[-1], self.layout.pki
        address = f"{host}:{THANOS_QUERIER_PORT}"
        argv = [
            sys.executable, "-m", "ktop.lab.thanos_querier", f"--listen={address}",
            f"--cert={pki / 'extension.crt'}", f"--key={pki / 'extension.key'}",
            f"--prometheus={prometheus}", f"--apiserver={self.info['apiservers'][0]['url']}",
            f"--token-file={self.dir / 'admin.token'}",
        ]  # fmt: skip
        self._spawn("thanos-querier", argv)
        # answers 401 without a token once it serves
        self._wait("thanos-querier", lambda: http_get(f"https://{address}/api/v1/query")[0], 30)

        async def publish() -> None:
            async with kube.api_client(self.layout.kubeconfig) as api:
                await serve_monitoring_route(api, address)

        asyncio.run(publish())
        log = procs.component(self.dir, "thanos-querier")["log"]
        self.info["thanos_querier"] = {"url": f"https://{address}", "log": str(log)}

    # -- helpers -------------------------------------------------------------------------
    def _on_host(self, host: str, argv: list[str], *, restart: bool = False) -> list[str]:
        """A control-plane component run as its host (kubeadm-like labs only); ``restart``:
        started again when it exits (the leader-elected ones).
        """
        if not self.cfg.kubeadm_hosts:
            return argv
        return comp.as_host(node_of(host), argv, restart=restart)

    def _spawn(self, name: str, argv: list[str]) -> None:
        procs.spawn(self.dir, name, argv)

    def _check_alive(self, name: str) -> None:
        if not procs.is_running(self.dir, name):
            log = procs.component(self.dir, name)["log"]
            raise LabError(f"{name} exited during start-up; log tail:\n{tail(log)}")

    def _wait(self, name: str, probe: Any, timeout_s: float) -> None:
        def checked() -> bool:
            self._check_alive(name)
            return bool(probe())

        log = procs.component(self.dir, name)["log"]
        wait_for(
            checked,
            timeout_s=timeout_s,
            what=f"{name} ready",
            on_timeout=lambda: f"{name} log tail:\n{tail(log)}",
        )

    def _write_info(self) -> None:
        tmp = self.layout.cluster_info.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.info, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.layout.cluster_info)


def _exit_cleanly_on_sigterm() -> None:
    """Turn SIGTERM (e.g. a CI timeout) into SystemExit so `finally` blocks and atexit stop
    the lab; only when nobody else handles SIGTERM and we are on the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        return

    def _raise(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _raise)


def _etcd_healthy(client_url: str) -> bool:
    status, body = http_get(f"{client_url}/health", timeout_s=2.0)
    return status == 200 and b'"true"' in body


def wait_forever_then_stop(lab: Lab) -> None:
    """Block until Ctrl-C/SIGTERM or until every component is gone (`down` from elsewhere),
    reaping children that others stopped; then stop the lab.
    """
    requested: list[int] = []

    def _request_stop(signum: int, frame: object) -> None:
        requested.append(signum)

    signal.signal(signal.SIGTERM, _request_stop)
    signal.signal(signal.SIGINT, _request_stop)
    try:
        while not requested and procs.running_components(lab.dir):
            time.sleep(0.5)
        _log("stop requested" if requested else "every component is gone; exiting")
    finally:
        lab.stop()
