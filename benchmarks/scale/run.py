"""One benchmark size against a real apiserver: start the lab, fill it, measure every tool."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.scale import cluster, objects, tools
from benchmarks.scale.api import JSON, PARTIAL, PROTOBUF, TABLE, Api
from benchmarks.scale.cluster import LEASES, NODES, Renewer, log
from ktop.lab import procs
from ktop.sources.live.list_plan import ROWS_ONLY_PAGES
from ktop.sources.live.options import LiveOptions
from ktop.sources.live.reads import NODES as NODES_PATH
from ktop.sources.live.reads import PENDING_WHOLE, WATCHES

NODES_FEED = "nodes (Table without objects, ktop)"
LEASES_FEED = "node Leases (sampled, ktop)"
KUBELET_LEASE_RENEW_S = 10.0
"""kubelet renews its Lease every quarter of the 40 s lease duration."""
KUBELET_STATUS_REPORT_S = 300.0
"""kubelet writes an unchanged node status every 5 minutes (nodeStatusReportFrequency)."""


@dataclass(frozen=True)
class Options:
    """How to measure one size."""

    runs: int = 3
    pods: int = 1_000
    concurrency: int = 32
    renew_per_s: float = 100.0
    steady_s: float = 30.0
    idle_s: float = 20.0
    kwok_nodes: int = 0
    tools: tuple[str, ...] = ("ktop", "ktop (UI)", "kubectl", "k9s")
    racks: bool = True
    """Label the nodes with ktop's rack label (a cluster labelled for ktop's racks, whose
    node list ktop reads with metadata); without, ktop splits the list by zone."""
    rss_per_node: Mapping[str, tuple[float, int]] = field(default_factory=dict)
    """Per other tool, its peak resident MB per node and the size it was measured at (the
    largest measured before): a tool that would not fit beside the lab is not started."""


FLOOR_PAGE = next(r for r in WATCHES if r.path == NODES_PATH).page_size * ROWS_ONLY_PAGES
"""The floor (a node Table without objects) is listed in pages as large as ktop's zone lists."""
MEMORY_MARGIN = 1.25
"""A tool is started only if its expected peak, times this, fits in the memory available."""
MEMORY_RESERVE_MB = 2048.0
"""Kept free beside the lab (etcd and the apiservers grow while a tool lists)."""


def mem_available_mb() -> float:
    """MemAvailable of ``/proc/meminfo``, in MB (infinite where there is no such file)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


def fits(
    tool: str, nodes: int, per_node: Mapping[str, tuple[float, int]], available_mb: float
) -> str | None:
    """Why ``tool`` is not started at ``nodes`` (its peak scaled from a smaller size would
    not fit in ``available_mb`` beside the lab), or ``None`` when it fits or is unknown.
    """
    known = per_node.get(tool)
    if known is None:
        return None
    mb, at = known
    need = mb * nodes * MEMORY_MARGIN
    if need <= available_mb - MEMORY_RESERVE_MB:
        return None
    return (
        f"would need about {need / 1024:.1f} GiB ({mb * at:,.0f} MB at {at:,} nodes, scaled, "
        f"x{MEMORY_MARGIN}); {available_mb / 1024:.1f} GiB available beside the lab, "
        f"{MEMORY_RESERVE_MB / 1024:.0f} GiB kept free"
    )


PROBE_FIGURES = (
    "first_answer_s",
    "cpu_s",
    "wall_s",
    "bytes",
    "bytes_decoded",
    "requests",
    "peak_rss_mb",
    "nodes_wall_s",
    "nodes_bytes",
    "rss_imported_mb",
    "rss_complete_mb",
)
"""What each probe run reports and the results keep a list of (one value per run)."""
QUIET_S = 15.0
"""The node watch counts as quiet after this long without an event."""
QUIET_TIMEOUT_S = 600.0
"""How long to wait for a quiet node watch before measuring idle CPU anyway (and saying so)."""


class NodeWatch:
    """Counts the lab's node events (a Table watch without objects, as ktop's) so that the
    idle window starts only once no node changes, and says how many changed during it.
    The controller-manager rewrites nodes for minutes after they are created (a
    transient of the benchmark's lab, not of a cluster at rest).
    """

    def __init__(self, api: Api) -> None:
        self.api = api
        self.events = 0
        self.last = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Open the watch in the background."""
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(Exception):
                async with self.api.watch(NODES, "includeObject=None", TABLE) as lines:
                    async for line in lines:
                        if line.strip():
                            self.events += 1
                            self.last = time.monotonic()
            await asyncio.sleep(1.0)

    async def quiet(self) -> float:
        """Wait until no node event came for :data:`QUIET_S` (at most
        :data:`QUIET_TIMEOUT_S`); return the seconds waited.
        """
        t0 = time.monotonic()
        while time.monotonic() - self.last < QUIET_S and time.monotonic() - t0 < QUIET_TIMEOUT_S:
            await asyncio.sleep(1.0)
        return time.monotonic() - t0

    async def stop(self) -> None:
        """Close the watch and its client."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        await self.api.close()


SETTLE_CORES = 0.5
"""The lab counts as settled for the probe when its components (etcd, apiservers,
controller-manager, scheduler) together use less than this share of a core over
:data:`SETTLE_WINDOW_S`, the Lease renewals going on..."""
SETTLE_PLATEAU_CORES = 0.1
"""... or when their share has stopped falling: the last :data:`SETTLE_PLATEAU_WINDOWS`
windows within this much of each other. A large lab at rest still works (the node
lifecycle controller walks every node each period, the apiserver takes the renewals);
a lab still absorbing what was just created writes nodes, which the quiet node watch
rules out."""
SETTLE_PLATEAU_WINDOWS = 3
SETTLE_PLATEAU_MAX_CORES = 1.0
"""A plateau counts only under this share (half the benchmark machine's two cores): a
100,000-node lab after the benchmark's whole lists of 440-660 MB held 1.9 cores for
three windows in a row, a busy lab, not one at rest (about 0.8 core there)."""
SETTLE_WINDOW_S = 5.0
SETTLE_TIMEOUT_S = 300.0
"""How long to wait for a settled lab before the probe runs anyway (and says so)."""
STREAM_TIMEOUT_S = 600.0
"""A streaming list that has not sent its end bookmark by then is reported not measured."""


def lab_cpu_s(lab_dir: Path) -> float:
    """CPU seconds so far of every running component of the lab."""
    total = 0.0
    for name, entry in procs.read_state(lab_dir)["components"].items():
        if entry.get("pid") and procs.is_running(lab_dir, name):
            with contextlib.suppress(OSError):
                total += tools.proc_cpu_s(int(entry["pid"]))
    return total


def at_rest(shares: list[float]) -> bool:
    """Whether the lab's share of a core per window (oldest first) says it is at rest:
    the last window under :data:`SETTLE_CORES`, or the last
    :data:`SETTLE_PLATEAU_WINDOWS` within :data:`SETTLE_PLATEAU_CORES` of each other and
    under :data:`SETTLE_PLATEAU_MAX_CORES`.
    """
    if shares and shares[-1] < SETTLE_CORES:
        return True
    last = shares[-SETTLE_PLATEAU_WINDOWS:]
    return (
        len(last) == SETTLE_PLATEAU_WINDOWS
        and max(last) - min(last) <= SETTLE_PLATEAU_CORES
        and max(last) < SETTLE_PLATEAU_MAX_CORES
    )


async def settle(lab_dir: Path, nodes: NodeWatch) -> dict[str, float]:
    """Wait until no node changed for :data:`QUIET_S` and the lab is at rest
    (:func:`at_rest`; at most :data:`SETTLE_TIMEOUT_S`): a cluster at rest, not one
    still absorbing the objects the benchmark just created (ktop's start measured right
    after them took twice as long as on the same lab left alone). Returns the seconds
    waited and the lab's share of a core in the last window.
    """
    t0 = time.monotonic()
    shares: list[float] = []
    while time.monotonic() - t0 < SETTLE_TIMEOUT_S:
        c0 = lab_cpu_s(lab_dir)
        await asyncio.sleep(SETTLE_WINDOW_S)
        shares.append((lab_cpu_s(lab_dir) - c0) / SETTLE_WINDOW_S)
        if at_rest(shares) and time.monotonic() - nodes.last >= QUIET_S:
            break
    return {
        "settle_wait_s": time.monotonic() - t0,
        "lab_cores_at_probe": shares[-1] if shares else float("nan"),
    }


def _load() -> float:
    return os.getloadavg()[0]


class SizeRun:
    """Measures every tool at one size, against one running lab."""

    def __init__(self, lab_dir: Path, info: dict[str, Any], nodes: int, o: Options) -> None:
        self.dir, self.info, self.nodes, self.o = lab_dir, info, nodes, o
        self.kubeconfig = str(lab_dir / "kubeconfig")
        self.apiservers = [a["url"] for a in info["apiservers"]]
        self.out: dict[str, Any] = {"nodes": nodes, "pods": o.pods, "tools": {}}
        self.out["bytes_on_wire"] = True  # earlier runs counted bytes decoded
        self.out["racks"] = o.racks

    async def measure(self) -> dict[str, Any]:
        """Populate, then measure each tool and each feed."""
        api = Api(cluster.server(self.info, self.dir), connections=self.o.concurrency)
        renewer = Renewer(api, self.nodes, self.o.renew_per_s)
        task: asyncio.Task[None] | None = None
        try:
            self.out["load_at_start"] = _load()
            self.out["populate_s"] = await cluster.populate(
                api, self.nodes, self.o.pods, self.o.concurrency, racks=self.o.racks
            )
            await self._representations(api)
            task = asyncio.create_task(renewer.run())
            renewer.running.set()
            if "kubectl" in self.o.tools:
                await self._guard("kubectl get nodes -o json", self._kubectl())
            if "ktop" in self.o.tools:
                watch = NodeWatch(Api(cluster.server(self.info, self.dir)))
                watch.start()
                try:
                    self.out["probe_settle"] = await settle(self.dir, watch)
                finally:
                    await watch.stop()
                log(f"lab settled for the probe: {self.out['probe_settle']}")
                await self._guard("ktop", self._ktop_probe(renewer))
            await self._feeds(api, renewer)
            if "ktop (UI)" in self.o.tools:
                await self._guard("ktop (UI)", self._tui("ktop (UI)", renewer))
            if "k9s" in self.o.tools:
                await self._guard("k9s", self._tui("k9s", renewer))
            self._steady()
            self.out["load_at_end"] = _load()
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            await api.close()
        return self.out

    async def _guard(self, tool: str, measure: Any) -> None:
        """Run one tool's measurement; a failure is reported as that tool not measured."""
        try:
            await measure
        except Exception as exc:
            log(f"{tool} failed: {type(exc).__name__}: {exc}")
            self.out["tools"][tool] = {"not_measured": f"{type(exc).__name__}: {exc}"}

    # -- sizes of what there is to read ----------------------------------------------------
    async def _representations(self, api: Api) -> None:
        reps: dict[str, int] = {}
        wire: dict[str, int] = {}
        seconds: dict[str, float] = {}
        pods = f"/api/v1/namespaces/{objects.PENDING_NAMESPACE}/pods"
        for name, path, accept, query in (
            ("nodes as JSON (kubectl get -o json)", NODES, JSON, ""),
            (
                "nodes as Table with object metadata (ktop's list)",
                NODES,
                TABLE,
                "includeObject=Metadata",
            ),
            ("nodes as PartialObjectMetadata", NODES, PARTIAL, ""),
            ("nodes as protobuf (whole objects; no Table form)", NODES, PROTOBUF, ""),
            ("nodes as Table without objects (ktop's watch)", NODES, TABLE, "includeObject=None"),
            ("node Leases as JSON (ktop)", LEASES, JSON, ""),
            ("node Leases as Table without objects", LEASES, TABLE, "includeObject=None"),
            (f"pending pods as JSON (ktop reads {PENDING_WHOLE} so)", pods, JSON, ""),
            (
                "pending pods as Table without objects (ktop reads the rest so)",
                pods,
                TABLE,
                "includeObject=None",
            ),
        ):
            cost = await api.list_bytes(path, accept, query)
            reps[name] = cost.decoded
            wire[name] = cost.wire
            seconds[name] = cost.seconds
        for name, accept, query in (
            ("nodes as a streaming list (sendInitialEvents), whole objects as JSON", JSON, ""),
            (
                "nodes as a streaming list (sendInitialEvents), Table without objects",
                TABLE,
                "includeObject=None",
            ),
        ):
            try:
                cost = await asyncio.wait_for(
                    api.streaming_list_bytes(NODES, accept, query), STREAM_TIMEOUT_S
                )
            except (RuntimeError, aiohttp.ClientError, TimeoutError) as exc:
                log(f"{name}: not measured: {exc}")
                continue
            reps[name] = cost.decoded
            wire[name] = cost.wire
            seconds[name] = cost.seconds
        floor = await api.list_bytes(NODES, TABLE, "includeObject=None", limit=FLOOR_PAGE)
        self.out["floor"] = {
            "wall_s": [floor.seconds],
            "bytes": [floor.wire],
            "bytes_decoded": [floor.decoded],
            "requests": [floor.requests],
        }
        log(f"floor: {floor.seconds:.1f}s {floor.wire / 1e6:.1f} MB on the wire")
        code, body = await api.request("GET", "/metrics")
        if code == 200:
            reps["one apiserver /metrics (not per node)"] = len(body)
        self.out["representations"] = reps
        self.out["representations_wire"] = wire
        self.out["representations_s"] = seconds
        log(f"representations: { {k: round(v / 1e6, 1) for k, v in reps.items()} } MB")

    # -- kubectl ------------------------------------------------------------------------------
    async def _kubectl(self) -> None:
        path, why = tools.find_kubectl()
        wire = self.out["representations_wire"]
        for tool, args, nbytes in (
            ("kubectl get nodes -o json", ["get", "nodes", "-o", "json"],
             wire["nodes as JSON (kubectl get -o json)"]),
            ("kubectl get pods -A -o json", ["get", "pods", "-A", "-o", "json"], None),
        ):  # fmt: skip
            if path is None:
                self.out["tools"][tool] = {"not_measured": why}
                continue
            too_big = fits(tool, self._count(tool), self.o.rss_per_node, mem_available_mb())
            if too_big is not None:
                self.out["tools"][tool] = {"not_measured": too_big}
                log(f"{tool}: not started: {too_big}")
                continue
            t: dict[str, Any] = {"wall_s": [], "peak_rss_mb": [], "bytes": [], "requests": []}
            for _ in range(self.o.runs):
                run = await asyncio.to_thread(
                    tools.timed_command, [path, "--kubeconfig", self.kubeconfig, *args]
                )
                if run.returncode != 0:
                    t = {"not_measured": f"{tool} exited {run.returncode}"}
                    break
                t["wall_s"].append(run.wall_s)
                t["peak_rss_mb"].append(run.peak_rss_mb)
                t["output_bytes"] = run.stdout_bytes
            if "wall_s" in t:
                size = nbytes if nbytes is not None else await self._pods_json_bytes()
                pages = -(-max(1, self._count(tool)) // 500)
                t["bytes"] = [size] * len(t["wall_s"])
                t["requests"] = [pages] * len(t["wall_s"])
            self.out["tools"][tool] = t
            log(f"{tool}: {t.get('wall_s')}")
        self.out["kubectl_version"] = tools.version([path, "version", "--client"]) if path else why

    def _count(self, tool: str) -> int:
        return self.nodes if "nodes" in tool else self.o.pods

    async def _pods_json_bytes(self) -> int:
        api = Api(cluster.server(self.info, self.dir))
        try:
            cost = await api.list_bytes("/api/v1/pods", JSON)
        finally:
            await api.close()
        return cost.wire

    # -- ktop, source and model only ---------------------------------------------------------
    async def _ktop_probe(self, renewer: Renewer) -> None:
        t: dict[str, Any] = {k: [] for k in PROBE_FIGURES}
        for i in range(self.o.runs):
            steady = self.o.steady_s if i == 0 else 0.0
            argv = [sys.executable, "-m", "benchmarks.scale.probe", "--kubeconfig", self.kubeconfig]
            argv += ["--nodes", str(self.nodes), "--steady", str(steady)]
            for url in self.apiservers:
                argv += ["--apiserver", url]
            cm = self.info.get("controller_manager", {}).get("metrics_url")
            if cm:  # its node_collector_* zones are the nodes area's first answer
                argv += ["--controller-manager-metrics", cm]
            r0, w0 = renewer.renewed, time.monotonic()
            argv += ["--t0", repr(time.time())]
            proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE)
            stdout, _ = await proc.communicate()
            res = json.loads(stdout.decode().strip().splitlines()[-1])
            if "wall_s" not in res:
                t = {"not_measured": f"ktop did not complete in time: {res}"}
                break
            for key in PROBE_FIGURES:
                if key in res:  # the first answer may not have come (an area never read)
                    t[key].append(res[key])
            if "steady" in res:
                st = res["steady"]
                st["lease_renewals_per_s"] = (renewer.renewed - r0) / (time.monotonic() - w0)
                t["steady"] = st
                t["steady_cpu_pct"] = [st["cpu_pct"]]
                t["by_path_at_complete"] = res.get("by_path", {})
                t["phases"] = res.get("phases", {})
            log(
                f"ktop: {res['wall_s']:.1f}s {res['bytes'] / 1e6:.1f} MB {res['requests']} requests"
            )
        self.out["tools"]["ktop"] = t

    # -- what each feed costs --------------------------------------------------------------------
    async def _feeds(self, api: Api, renewer: Renewer) -> None:
        feeds = (
            ("node Leases (JSON watch, before sampling)", LEASES, "allowWatchBookmarks=true", JSON),
            ("node Leases (Table without objects)", LEASES, "includeObject=None", TABLE),
            ("nodes (Table with metadata, before)", NODES, "includeObject=Metadata", TABLE),
            (NODES_FEED, NODES, "includeObject=None", TABLE),
            ("pending pods (ktop)", "/api/v1/pods", "fieldSelector=status.phase%3DPending", JSON),
            ("Warning events (ktop)", "/api/v1/events", "fieldSelector=type%3DWarning", JSON),
        )
        counts = {name: [0, 0] for name, *_ in feeds}

        async def watch(name: str, path: str, query: str, accept: str) -> None:
            async with api.watch(path, query, accept) as lines:
                async for line in lines:
                    if line.strip():
                        counts[name][0] += 1
                        counts[name][1] += len(line)

        r0, t0 = renewer.renewed, time.monotonic()
        tasks = [asyncio.create_task(watch(*f)) for f in feeds]
        await asyncio.sleep(self.o.steady_s)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        dt = time.monotonic() - t0
        renew_rate = (renewer.renewed - r0) / dt
        reps = self.out["representations"]
        rows = {
            "nodes (Table with metadata, before)":
                reps["nodes as Table with object metadata (ktop's list)"] / self.nodes,
            NODES_FEED: reps["nodes as Table without objects (ktop's watch)"] / self.nodes,
        }  # fmt: skip
        out: dict[str, Any] = {}
        for name, (events, nbytes) in counts.items():
            per = nbytes / events if events else 0.0
            rate = events / dt
            if name.startswith("node Leases"):
                real = self.nodes / KUBELET_LEASE_RENEW_S
            elif name.startswith("nodes"):
                real, per = self.nodes / KUBELET_STATUS_REPORT_S, per or rows[name]
            else:
                real = rate
            out[name] = {
                "events_per_s": rate,
                "bytes_per_event": per,
                "real_events_per_s": real,
                "kb_per_s_real_rate": real * per / 1e3,
            }
        # ktop's Lease sampling: a page of Leases per round, whatever the renewal rate (plus
        # the not-Ready and lagging nodes' Leases by name, none on a healthy cluster).
        o = LiveOptions()
        lease = reps["node Leases as JSON (ktop)"] / self.nodes
        per_s = min(self.nodes, o.leases_per_round) / o.lease_round_s
        out[LEASES_FEED] = {
            "events_per_s": per_s,
            "bytes_per_event": lease,
            "real_events_per_s": per_s,
            "kb_per_s_real_rate": per_s * lease / 1e3,
        }
        self.out["feeds"] = out
        self.out["renewals_per_s_during_feeds"] = renew_rate
        log(f"feeds: { {k: round(v['kb_per_s_real_rate'], 1) for k, v in out.items()} } KB/s")

    # -- TUIs in tmux ---------------------------------------------------------------------------
    async def _tui(self, tool: str, renewer: Renewer) -> None:
        tmux = tools.Tmux()
        home = tempfile.mkdtemp(prefix="ktop-bench-home-")
        env = {"TERM": "xterm-256color", "HOME": home, "KUBECONFIG": self.kubeconfig,
               "K9S_CONFIG_DIR": home, "XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home}  # fmt: skip
        if tool == "k9s":
            path, why = tools.find_k9s()
            if path is None:
                self.out["tools"][tool] = {"not_measured": why}
                return
            too_big = fits(tool, self.nodes, self.o.rss_per_node, mem_available_mb())
            if too_big is not None:
                self.out["tools"][tool] = {"not_measured": too_big}
                log(f"{tool}: not started: {too_big}")
                return
            argv = [path, "--kubeconfig", self.kubeconfig, "-c", "nodes", "--readonly"]
            done = tools.k9s_shows_all(self.nodes)
            self.out["k9s_version"] = tools.version([path, "version", "-s"])
        else:
            argv = [sys.executable, "-m", "ktop", "--kubeconfig", self.kubeconfig]
            for url in self.apiservers:
                argv += ["--apiserver", url]
            done = tools.ktop_shows_all(self.nodes)
        t: dict[str, Any] = {"wall_s": [], "peak_rss_mb": [], "steady_cpu_pct": []}
        idle: list[float] = []
        nodes = NodeWatch(Api(cluster.server(self.info, self.dir), connections=2))
        if tool != "k9s":  # only ktop's runs have an idle window
            nodes.start()
        quiet: dict[str, float] = {}
        session = "r0"

        async def until_quiet() -> None:
            # Idle means nothing changes: no Lease renewal, no node written, and ktop done
            # with its first sweep of the node Leases (a page a second after the start).
            renewer.running.clear()
            t0 = time.monotonic()
            while time.monotonic() - t0 < QUIET_TIMEOUT_S and not tools.ktop_leases_swept(
                tmux.screen(session)
            ):
                await asyncio.sleep(1.0)
            quiet["sweep_wait_s"] = time.monotonic() - t0
            quiet["waited_s"] = await nodes.quiet() + quiet["sweep_wait_s"]
            quiet["events_before"] = nodes.events

        try:
            for i in range(self.o.runs):
                windows: dict[str, tuple[float, Any]] = {}
                if i == 0:
                    windows["steady"] = (self.o.idle_s, renewer.running.set)
                    if tool != "k9s":
                        windows["idle"] = (self.o.idle_s, until_quiet)
                session = f"r{i}"
                res = await tmux.run(session, argv, env, done, 600.0, windows)
                if "events_before" in quiet and "node_events_during_idle" not in t:
                    t["idle_quiet_wait_s"] = quiet["waited_s"]
                    t["idle_sweep_wait_s"] = quiet["sweep_wait_s"]
                    t["node_events_during_idle"] = nodes.events - quiet["events_before"]
                renewer.running.set()
                if res.wall_s is None:
                    t = {"not_measured": "never showed every node; last screen:\n" + res.screen}
                    break
                t["wall_s"].append(res.wall_s)
                t["peak_rss_mb"].append(res.peak_rss_mb)
                if "steady" in res.cpu_pct:
                    t["steady_cpu_pct"].append(res.cpu_pct["steady"])
                if "idle" in res.cpu_pct:
                    idle.append(res.cpu_pct["idle"])
                log(f"{tool}: {res.wall_s:.1f}s, {res.peak_rss_mb:.0f} MB, CPU {res.cpu_pct}")
        finally:
            tmux.close()
            await nodes.stop()
        if idle:
            t["idle_cpu_pct"] = idle
        self.out["tools"][tool] = t

    # -- steady state, at the kubelet's real rates -------------------------------------------
    def _steady(self) -> None:
        probe = self.out["tools"].get("ktop", {})
        st = probe.get("steady")
        if not st:
            return
        nodes = self.out["feeds"][NODES_FEED]
        # ktop's measured load, with the node feed moved from the lab's rate to the
        # kubelets' real one (bytes per event as measured on this apiserver). Leases are
        # sampled: their cost does not follow the renewal rate, so it stays as measured (the
        # lab's slow renewals make Leases look lagging, so it includes reads by name that a
        # healthy cluster would not need).
        measured_nodes = st.get("node_events_per_s", 0.0) * nodes["bytes_per_event"]
        real = st["bytes_per_s"] - measured_nodes + 1e3 * nodes["kb_per_s_real_rate"]
        # Without the instances' /metrics and APF dumps (what --prometheus leaves out): only
        # the kubeconfig's address, which carries every list, watch and Lease sample.
        instances = sum(
            v for d, v in st.get("bytes_per_s_by_destination", {}).items() if d != "apiserver"
        )
        ui = self.out["tools"].get("ktop (UI)", {})
        self.out["steady"] = {
            "lease_renewals_per_s": st["lease_renewals_per_s"],
            "ktop_requests_per_s": st["requests_per_s"],
            "ktop_kb_per_s": st["bytes_per_s"] / 1e3,
            "ktop_kb_per_s_real_rate": real / 1e3,
            "ktop_kb_per_s_real_rate_without_metrics": (real - instances) / 1e3,
            "ktop_kb_per_s_instances": instances / 1e3,
            "ktop_requests_by_path": st["requests_by_path"],
            "ktop_ui_idle_cpu_pct": statistics.median(ui["idle_cpu_pct"])
            if ui.get("idle_cpu_pct")
            else None,
            "ktop_ui_idle_node_events": ui.get("node_events_during_idle"),
            "ktop_ui_idle_quiet_wait_s": ui.get("idle_quiet_wait_s"),
        }


def measure_size(lab_dir: Path, nodes: int, o: Options) -> dict[str, Any]:
    """Start a lab, measure one size, stop the lab."""
    log(f"== {nodes} nodes, {o.pods} pending pods: starting the lab")
    lab = cluster.start_lab(lab_dir, o.kwok_nodes)
    try:
        return asyncio.run(SizeRun(lab_dir, lab.info, nodes, o).measure())
    finally:
        lab.stop()
