"""``python -m benchmarks.soak``: ktop's UI live for an hour against a churning lab; memory
sampled every minute.

    python -m benchmarks.soak [--minutes 60] [--nodes 500] [--out benchmarks/results/soak.json]
    python -m benchmarks.soak --docs [--out RESULTS]   # rewrite the soak section of the docs

The run starts the local control plane (``ktop.lab``: etcd, two kube-apiservers, scheduler,
controller-manager, one KWOK controller per zone renewing its nodes' Leases, Prometheus),
then the real ``ktop --kubeconfig <lab kubeconfig>`` in a private tmux server (160x48,
``TERM=xterm-256color``, no user config, a cache dir of its own). For the whole duration:

- every ``--cycle`` seconds a zone goes NotReady (its KWOK controller is killed, the
  ``zone-outage`` scenario of ``ktop.lab.inject``) and comes back ``--outage`` seconds later,
  the zones in turn;
- each cycle creates pods no node can take (a nodeSelector no node has), ordinary pods the
  scheduler places on the KWOK nodes, and, once the zone is down, pods pinned to that zone
  (pending until it is back, then scheduled); the earlier cycles' pods are deleted;
- every minute the resident memory of ktop's process tree is read from ``/proc``, and the
  pane is captured to check that the screen still updates (the status line's clock).

It stops itself after ``--minutes`` (a bounded number of samples), tears down tmux and the
lab (also on an error or Ctrl-C) and writes the results: RSS per minute, every churn event
with its time, and the verdict on the last half hour (its highest RSS against the RSS at its
start, at most 5% more). ``--docs`` writes the soak block of ``docs/benchmarks.md`` from
that file and changes nothing else of the document; ``make docs`` (``ktop.docgen``) writes it
from the same file with every other generated block.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.scale import tools
from benchmarks.scale.__main__ import machine, versions
from benchmarks.scale.api import TABLE, Api, limited
from benchmarks.scale.cluster import server
from benchmarks.scale.tables import table
from ktop import __version__, docgen
from ktop.lab import Lab, LabConfig, LabTarget, inject, recover, resolve_target

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "soak.json"
DOCS = ROOT / "docs" / "benchmarks.md"
SECTION = "soak"
TARGET_GROWTH = 0.05
"""The last half hour's highest RSS may exceed the RSS at its start by at most this much."""
WINDOW_MIN = 30
"""The judged window: the last half hour (the last half of a shorter run)."""
NAMESPACE = "ktop-soak"
POOL_LABEL = "ktop.dev/soak-pool"
CYCLE_LABEL = "ktop.dev/soak-cycle"
KIND_LABEL = "ktop.dev/soak-kind"
ZONE_LABEL = "topology.kubernetes.io/zone"
PODS_PATH = f"/api/v1/namespaces/{NAMESPACE}/pods"
STEP_PART_TIMEOUT_S = 90.0
"""A part of a churn step (the outage, the deletions, the creations) that takes longer is
reported as failed, and the run goes on."""
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
SESSION = "ktop"
WIDTH, HEIGHT = 160, 48
CLOCK = re.compile(r"\b(\d\d):(\d\d):(\d\d)Z")
TRACEMALLOC_BOOTSTRAP = """
import sys, threading, time, tracemalloc
from pathlib import Path

out = Path(sys.argv.pop(1))

def dump():
    while True:
        for req in sorted(out.glob("*.request")):
            tracemalloc.take_snapshot().dump(str(req.with_suffix(".tracemalloc")))
            req.unlink()
        time.sleep(1.0)

threading.Thread(target=dump, name="soak-tracemalloc", daemon=True).start()
from ktop.cli import main
sys.argv[0] = "ktop"
sys.exit(main())
"""
"""ktop's own entry point, with a thread that dumps a tracemalloc snapshot whenever the
soak asks for one (``--tracemalloc``: a diagnostic run, its RSS includes tracemalloc's)."""
TRACEMALLOC_TOP = 25
LEASE_S = 40
"""Node lease duration and node monitor grace period of the soak's lab (seconds)."""
MAX_READY_WAIT_S = 900.0
"""How long ktop may take to list all the nodes before the run gives up."""


# -- the plan and the verdict (pure) --------------------------------------------------------
@dataclass(frozen=True)
class Cadence:
    """How the lab churns."""

    cycle_s: float = 240.0
    outage_s: float = 120.0
    first_s: float = 30.0
    pinned_after_s: float = 60.0
    pending: int = 10
    ordinary: int = 30
    pinned: int = 10


@dataclass(frozen=True)
class Step:
    """One churn action, ``t_s`` seconds after ktop first showed all the nodes."""

    t_s: float
    action: str
    cycle: int
    zone: str


def plan(minutes: float, cadence: Cadence, zones: Sequence[str]) -> list[Step]:
    """Every churn step of a run of ``minutes``, in time order.

    Each cycle: take a zone down, delete the earlier cycles' pods, create pending and
    ordinary pods; after ``pinned_after_s`` create pods pinned to the zone that is down;
    after ``outage_s`` bring the zone back. A cycle starts only when its recovery still
    falls inside the run.
    """
    steps: list[Step] = []
    end = minutes * 60.0
    cycle = 0
    t = cadence.first_s
    while t + cadence.outage_s < end:
        zone = zones[cycle % len(zones)]
        steps.append(Step(t, "zone down, pods created", cycle, zone))
        if cadence.pinned_after_s < cadence.outage_s:
            steps.append(Step(t + cadence.pinned_after_s, "pods pinned to the zone", cycle, zone))
        steps.append(Step(t + cadence.outage_s, "zone back", cycle, zone))
        cycle += 1
        t += cadence.cycle_s
    return sorted(steps, key=lambda s: s.t_s)


def judged_window(minutes: int) -> tuple[int, int]:
    """(mark minute, window minutes): the last half hour, or the last half of a shorter run."""
    window = min(WINDOW_MIN, minutes // 2)
    return minutes - window, window


def verdict(rss_by_minute: Mapping[int, float], minutes: int) -> dict[str, Any]:
    """The last half hour: growth = (highest RSS after the mark - RSS at the mark) / RSS at
    the mark; passed when at most :data:`TARGET_GROWTH`. No verdict (``passed`` None) when
    the sample at the mark or every sample after it is missing.
    """
    mark, window = judged_window(minutes)
    base = rss_by_minute.get(mark)
    after = {m: v for m, v in rss_by_minute.items() if mark < m <= minutes}
    out: dict[str, Any] = {
        "mark_minute": mark,
        "window_minutes": window,
        "target": TARGET_GROWTH,
        "rss_at_mark_mb": base,
        "samples_after_mark": len(after),
        "samples_expected_after_mark": window,
    }
    if base is None or not base or not after:
        return {**out, "growth": None, "passed": None}
    top = max(after, key=lambda m: (after[m], -m))
    growth = (after[top] - base) / base
    return {
        **out,
        "max_after_mb": after[top],
        "max_after_minute": top,
        "growth": growth,
        "passed": growth <= TARGET_GROWTH,
    }


# -- what the screen shows (pure) ----------------------------------------------------------
def status_clock(screen: str) -> str | None:
    """The source clock of the status line (``HH:MM:SS``, UTC), or None."""
    found = CLOCK.findall(screen)
    return ":".join(found[-1]) if found else None


def clock_lag_s(clock: str, now: datetime) -> float:
    """Seconds ``clock`` (UTC ``HH:MM:SS``) is behind ``now``, across midnight too."""
    h, m, s = (int(x) for x in clock.split(":"))
    shown = h * 3600 + m * 60 + s
    current = now.hour * 3600 + now.minute * 60 + now.second + now.microsecond / 1e6
    lag = (current - shown) % 86400
    return lag - 86400 if lag > 43200 else lag


def ready_shown(screen: str, nodes: int) -> int | None:
    """The ready count of the nodes panel's ``ready/total`` for the whole cluster."""
    found = re.findall(rf"([\d,]+)/{nodes:,}(?![\d,])", screen)
    return int(found[0].replace(",", "")) if found else None


def status_line(screen: str) -> str:
    """The screen line that holds the status line's clock (empty when none does)."""
    lines = [line for line in screen.splitlines() if CLOCK.search(line)]
    return lines[-1].strip() if lines else ""


# -- the docs section (pure) ---------------------------------------------------------------
def begin() -> str:
    """The opening marker of the soak block (the one marker style of ``ktop.docgen``)."""
    return docgen.begin(SECTION)


def end() -> str:
    """The closing marker of the soak block."""
    return docgen.end(SECTION)


def replace_section(text: str, body: str) -> str:
    """``text`` with the soak block's contents replaced by ``body``; nothing else changes
    (``MarkerError`` unless the block is there exactly once).
    """
    return docgen.replace_block(text, SECTION, body)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}%"


def _fmt(value: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def _minute_events(events: Sequence[Mapping[str, Any]]) -> dict[int, list[str]]:
    """Churn events per minute they happened in (minute m holds (m-1, m])."""
    out: dict[int, list[str]] = {}
    for e in events:
        minute = max(0, int(-(-float(e["t_s"]) // 60)))
        what = {"zone down, pods created": "{zone} down", "zone back": "{zone} back",
                "pods pinned to the zone": "pods pinned to {zone}"}.get(
            str(e["action"]), str(e["action"]))  # fmt: skip
        text = what.format(zone=e.get("zone", "?"))
        if e.get("errors"):
            text += f" ({', '.join(e['errors'])} failed)"
        elif e.get("error"):
            text += " (failed)"
        out.setdefault(minute, []).append(text)
    return out


def _outage_done(event: Mapping[str, Any]) -> bool:
    """Whether a zone-down step took its zone down (an older results file records only that
    the step failed, so then it did not).
    """
    if "errors" in event:
        return "outage" not in event["errors"]
    return not event.get("error")


def section(results: Mapping[str, Any]) -> str:
    """The soak section: conditions, the verdict and RSS per minute."""
    m = results.get("meta", {})
    c = m.get("cadence", {})
    v = results.get("verdict", {})
    samples = results.get("samples", [])
    events = results.get("events", [])
    outages = sum(1 for e in events if e["action"] == "zone down, pods created" and _outage_done(e))
    pods = sum(int(e.get("pods_created", 0)) for e in events)
    loads = [s["load1"] for s in samples if s.get("load1") is not None]
    load = f"load average {min(loads):.1f}-{max(loads):.1f}" if loads else "load not recorded"
    changed = m.get("ktop_uncommitted", [])
    tree = f"ktop {m.get('ktop_version', '?')} at commit {m.get('ktop_commit', '?')}"
    if m.get("ktop_from") == "commit":
        tree += " (as committed, unpacked apart from the working tree)"
    elif changed:
        tree += f" with uncommitted changes in {', '.join(f'`{p}`' for p in changed)}"
    lines = [
        f"Measured {m.get('date', '?')} by `{m.get('command', 'python -m benchmarks.soak')}` on "
        f"{m.get('machine', '?')} ({load} over the run: the machine was shared with other "
        f"work); {tree}.",
        "",
        f"- Cluster: {m.get('nodes', 0):,} KWOK nodes in {len(m.get('zones', []))} zones, their "
        f"Leases renewed by KWOK (lease duration and node monitor grace period "
        f"{m.get('lease_s', '?')} s); the lab's etcd, two kube-apiservers, scheduler, "
        "controller-manager and Prometheus on the same machine.",
        f"- ktop: `ktop --kubeconfig <the lab's kubeconfig>` in a {m.get('ui', '?')} tmux pane "
        f"for {m.get('minutes', '?')} minutes (from when it first listed all the nodes, "
        f"{_fmt(m.get('ktop_ready_s'), '{:.0f}')} s from its start).",
        f"- Churn: every {c.get('cycle_s', 0) / 60:g} minutes a zone goes NotReady (its KWOK "
        f"controller killed) and comes back {c.get('outage_s', 0) / 60:g} minutes later, "
        f"the zones in turn ({outages} outages); each cycle {c.get('pending', 0)} pods no node "
        f"can take, {c.get('ordinary', 0)} ordinary pods that schedule, and "
        f"{c.get('pinned', 0)} pods pinned to the zone that is down (pending until it is "
        f"back), the earlier cycles' pods deleted ({pods:,} pods created in all).",
        "",
    ]
    if v.get("passed") is None:
        lines.append(
            f"**No verdict**: the run has {v.get('samples_after_mark', 0)} of "
            f"{v.get('samples_expected_after_mark', '?')} samples after minute "
            f"{v.get('mark_minute', '?')} (error: {m.get('error') or 'none recorded'})."
        )
    else:
        word = "passed" if v["passed"] else "failed"
        first = next((x for x in samples if x.get("rss_mb")), None)
        lines.append(
            f"**Last {v['window_minutes']} minutes: {word}.** RSS at minute {v['mark_minute']}: "
            f"{v['rss_at_mark_mb']:.1f} MB; highest after it: {v['max_after_mb']:.1f} MB "
            f"(minute {v['max_after_minute']}); growth {_pct(v['growth'])} against the "
            f"{100 * v['target']:.0f}% target."
        )
        if first is not None and first["minute"] < v["mark_minute"]:
            lines.append(
                f"Before the mark, from minute {first['minute']} ({first['rss_mb']:.1f} MB) to "
                f"minute {v['mark_minute']}, RSS grew "
                f"{_pct((v['rss_at_mark_mb'] - first['rss_mb']) / first['rss_mb'])}."
            )
    if m.get("error"):
        lines.append(f"\nThe run stopped early: {m['error']}.")
    failed = [e for e in events if e.get("error")]
    if failed:
        lines.append(
            f"\n{len(failed)} of {len(events)} churn steps failed in part (the run went on): "
            + "; ".join(
                f"minute {e['t_s'] / 60:.1f}, {e['action']} ({e.get('zone', '?')}): {e['error']}"
                for e in failed
            )
            + "."
        )
    lines.append("")
    per_minute = _minute_events(events)
    rows = [
        [
            str(s["minute"]),
            _fmt(s.get("rss_mb")),
            _fmt(s.get("cpu_pct")),
            "-" if s.get("screen_ready") is None else f"{s['screen_ready']:,}",
            "-" if s.get("api_ready_nodes") is None else f"{s['api_ready_nodes']:,}",
            _fmt(s.get("screen_lag_s")),
            ", ".join(per_minute.get(int(s["minute"]), [])),
        ]
        for s in samples
    ]
    header = [
        "minute",
        "RSS (MB)",
        "ktop CPU in the minute before (% core)",
        "nodes Ready on ktop's screen",
        "nodes Ready in the API",
        "status-line clock behind (s)",
        "churn in the minute before",
    ]
    lines.append(table(header, rows, [True, True, True, True, True, True, False]))
    return "\n".join(lines)


def write_docs(results: Mapping[str, Any], path: Path = DOCS) -> None:
    """Rewrite only the soak block of ``path`` from ``results`` (``make docs`` rewrites it
    with every other block, from the same function and the saved results).
    """
    path.write_text(replace_section(path.read_text(encoding="utf-8"), section(results)))


# -- the run ------------------------------------------------------------------------------
def log(msg: str) -> None:
    """Progress on stderr."""
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _pod(name: str, cycle: int, kind: str, selector: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": PAUSE_IMAGE,
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }
        ],
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": 0,
    }
    if selector:
        spec["nodeSelector"] = selector
    labels = {"app.kubernetes.io/part-of": "ktop-soak", CYCLE_LABEL: str(cycle), KIND_LABEL: kind}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": spec,
    }


def lab_config(nodes: int) -> LabConfig:
    """The soak's lab: Prometheus on, and a kubelet's lease duration and the controller's
    grace period (40 s) rather than the e2e suite's 20 s, so a loaded machine does not make
    healthy zones flap (an outage still shows within a minute).
    """
    return LabConfig(
        nodes=nodes,
        prometheus=True,
        node_monitor_grace_period_s=LEASE_S,
        node_lease_duration_s=LEASE_S,
        start_timeout_s=900.0,
    )


def ktop_snapshot(commit: str, dest: Path) -> Path:
    """``ktop/`` and its themes as committed at ``commit``, unpacked under ``dest`` (which
    then goes first on ktop's ``PYTHONPATH``): uncommitted edits in the working tree, made
    while the run lasts, then cannot change the ktop being measured.
    """
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "ktop", "themes"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    (dest / "themes").rename(dest / "ktop" / "themes")  # as setup.py installs them
    return dest


def tracemalloc_growth(trace_dir: Path, minutes: Sequence[int]) -> dict[str, Any]:
    """What grew between each pair of consecutive snapshots: the lines (and the files)
    whose allocations grew most, from ``tracemalloc.Snapshot.compare_to``.
    """
    keep = (tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<*"))
    snaps = {
        m: tracemalloc.Snapshot.load(str(trace_dir / f"minute-{m:03d}.tracemalloc")).filter_traces(
            keep
        )
        for m in minutes
    }
    out: dict[str, Any] = {}
    for a, b in itertools.pairwise(minutes):
        pair: dict[str, Any] = {
            "traced_mb": [round(sum(t.size for t in snaps[m].traces) / 2**20, 2) for m in (a, b)]
        }
        for group in ("lineno", "filename"):
            stats = snaps[b].compare_to(snaps[a], group)
            pair[group] = [
                {
                    "where": str(st.traceback[0]),
                    "size_diff_kb": round(st.size_diff / 1024, 1),
                    "size_kb": round(st.size / 1024, 1),
                    "count_diff": st.count_diff,
                }
                for st in stats[:TRACEMALLOC_TOP]
            ]
        tb = snaps[b].compare_to(snaps[a], "traceback")[:5]
        pair["tracebacks"] = [
            {"size_diff_kb": round(st.size_diff / 1024, 1), "stack": st.traceback.format()[-24:]}
            for st in tb
        ]
        out[f"{a}-{b}"] = pair
    return out


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (not gone, not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _proc_details(pid: int) -> dict[str, Any]:
    """Anonymous resident memory (the heap, not mapped files), threads and open files of
    ``pid``: what tells a leak from the page cache.
    """
    out: dict[str, Any] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key == "RssAnon":
            out["rss_anon_mb"] = round(int(value.split()[0]) / 1024, 1)
        elif key == "Threads":
            out["threads"] = int(value)
    out["open_fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def _git(*args: str) -> str:
    with contextlib.suppress(OSError):
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return out.stdout
    return ""


class Soak:
    """One soak run: the lab, ktop in tmux, the churn and the samples."""

    def __init__(self, args: argparse.Namespace, argv: Sequence[str]) -> None:
        self.args = args
        self.minutes = int(args.minutes)
        self.nodes = int(args.nodes)
        self.cadence = Cadence(cycle_s=args.cycle, outage_s=args.outage)
        self.out_path: Path = args.out
        self.samples: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.t_ready = 0.0
        self.pid = 0
        self.t_launch = 0.0
        self.live_pods: dict[str, int] = {}
        """Pods the churn created and has not deleted yet, with their cycle."""
        self.trace_dir: Path | None = None
        self.trace_minutes: tuple[int, ...] = ()
        if args.tracemalloc:
            mark, _ = judged_window(self.minutes)
            self.trace_minutes = tuple(sorted({min(5, self.minutes), mark, self.minutes}))
        self.meta: dict[str, Any] = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python -m benchmarks.soak " + shlex.join(argv),
            "machine": machine(),
            "cores": os.cpu_count(),
            "versions": versions(),
            "ktop_version": __version__,
            "ktop_commit": _git("rev-parse", "--short", "HEAD").strip(),
            "ktop_from": args.ktop,
            "ktop_uncommitted": []
            if args.ktop == "commit"
            else [line[3:] for line in _git("status", "--porcelain", "--", "ktop").splitlines()],
            "nodes": self.nodes,
            "minutes": self.minutes,
            "cadence": asdict(self.cadence),
            "prometheus": True,
            "lease_s": LEASE_S,
            "ui": f"{WIDTH}x{HEIGHT}",
            "term": "xterm-256color",
            "finished": False,
            "error": None,
        }
        if args.tracemalloc:
            self.meta["tracemalloc_frames"] = args.tracemalloc
            self.meta["tracemalloc_minutes"] = list(self.trace_minutes)

    # -- bookkeeping ---------------------------------------------------------------------
    def results(self) -> dict[str, Any]:
        """Everything measured so far, with the verdict."""
        rss = {int(s["minute"]): float(s["rss_mb"]) for s in self.samples if s.get("rss_mb")}
        return {
            "meta": self.meta,
            "samples": self.samples,
            "events": self.events,
            "verdict": verdict(rss, self.minutes),
        }

    def save(self) -> None:
        """Write the results file (after every sample, so a crash keeps what was measured)."""
        self.out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.results(), indent=1) + "\n")
        tmp.replace(self.out_path)

    def now_s(self) -> float:
        """Seconds since ktop first showed all the nodes."""
        return time.monotonic() - self.t_ready

    # -- the whole run -------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Start everything, soak, tear everything down; the results."""
        own_lab_dir = self.args.lab_dir is None
        lab_dir = (
            Path(tempfile.mkdtemp(prefix="ktop-soak-lab-")) if own_lab_dir else self.args.lab_dir
        )
        cache_dir = Path(tempfile.mkdtemp(prefix="ktop-soak-cache-"))
        if self.trace_minutes:
            self.trace_dir = cache_dir / "tracemalloc"
            self.trace_dir.mkdir()
        lab: Lab | None = None
        tmux: tools.Tmux | None = None
        try:
            log(f"starting the lab: {self.nodes} KWOK nodes, Prometheus on")
            t0 = time.monotonic()
            lab = Lab(lab_dir, lab_config(self.nodes))
            lab.start()
            self.meta["lab_start_s"] = round(time.monotonic() - t0, 1)
            self.meta["zones"] = list(lab.cfg.zones)
            tmux = tools.Tmux(WIDTH, HEIGHT)
            asyncio.run(self._soak(lab, tmux, cache_dir))
            self.meta["finished"] = True
        except BaseException as exc:
            self.meta["error"] = f"{type(exc).__name__}: {exc}"[:500]
            log(f"stopped early: {self.meta['error']}")
            if isinstance(exc, Exception):
                self.meta["crash_files"] = sorted(
                    p.name for p in cache_dir.rglob("*") if p.is_file()
                )
            raise
        finally:
            if tmux is not None:
                screen = tmux.screen(SESSION)
                if screen.strip():
                    self.meta["last_screen"] = screen.splitlines()[-HEIGHT:]
                tmux.close()
            if lab is not None:
                lab.stop()
            self.meta["load_at_end"] = os.getloadavg()[0]
            self.save()
            log(f"results in {self.out_path}")
            shutil.rmtree(cache_dir, ignore_errors=True)
            if own_lab_dir and self.meta["finished"]:
                shutil.rmtree(lab_dir, ignore_errors=True)
            elif own_lab_dir:
                log(f"lab dir kept for its logs: {lab_dir}")
        return self.results()

    async def _soak(self, lab: Lab, tmux: tools.Tmux, cache_dir: Path) -> None:
        api = Api(server(lab.info, lab.dir), connections=8)
        try:
            await api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": NAMESPACE}})  # fmt: skip
            self._start_ktop(tmux, lab.layout.kubeconfig, cache_dir)
            await self._wait_ready(tmux)
            target = resolve_target(lab.layout.kubeconfig)
            steps = plan(self.minutes, self.cadence, lab.cfg.zones)
            self.meta["planned_steps"] = len(steps)
            churn = asyncio.create_task(self._churn(api, target, steps))
            try:
                await self._sample_all(api, tmux)
                if self.trace_dir is not None:
                    self.meta["tracemalloc"] = tracemalloc_growth(
                        self.trace_dir, self.trace_minutes
                    )
            finally:
                churn.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await churn
        finally:
            await api.close()

    def _start_ktop(self, tmux: tools.Tmux, kubeconfig: Path, cache_dir: Path) -> None:
        ktop = Path(sys.executable).parent / "ktop"
        exe = str(ktop) if ktop.is_file() else shutil.which("ktop") or "ktop"
        env = {
            "TERM": "xterm-256color",
            "KTOP_CONFIG_DIR": os.devnull,
            "KTOP_CACHE_DIR": str(cache_dir),
        }
        if self.args.ktop == "commit":
            env["PYTHONPATH"] = str(ktop_snapshot(self.meta["ktop_commit"], cache_dir / "src"))
        argv = [exe, "--kubeconfig", str(kubeconfig)]
        if self.trace_dir is not None:
            frames = str(self.args.tracemalloc)
            argv = [sys.executable, "-X", f"tracemalloc={frames}", "-c", TRACEMALLOC_BOOTSTRAP,
                    str(self.trace_dir), *argv[1:]]  # fmt: skip
        cmd = "exec " + shlex.join(argv)
        base = ["tmux", "-L", tmux.socket]
        subprocess.run(
            [*base, "new-session", "-d", "-s", SESSION, "-x", str(WIDTH), "-y", str(HEIGHT),
             "env", *(f"{k}={v}" for k, v in env.items()), "sh", "-c", cmd],
            check=True,
        )  # fmt: skip
        subprocess.run([*base, "set-option", "-t", SESSION, "remain-on-exit", "on"], check=False)
        panes = subprocess.run(
            [*base, "list-panes", "-t", SESSION, "-F", "#{pane_pid}"],
            capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        if not panes:
            raise RuntimeError("ktop exited at once in tmux")
        self.pid = int(panes[0])
        self.t_launch = time.monotonic()
        log(f"ktop started in tmux (pid {self.pid})")

    async def _wait_ready(self, tmux: tools.Tmux) -> None:
        while time.monotonic() - self.t_launch < MAX_READY_WAIT_S:
            if ready_shown(tmux.screen(SESSION), self.nodes) is not None:
                self.t_ready = time.monotonic()
                self.meta["ktop_ready_s"] = round(self.t_ready - self.t_launch, 1)
                log(f"ktop shows all {self.nodes:,} nodes after {self.meta['ktop_ready_s']} s")
                return
            if not _alive(self.pid):
                raise RuntimeError("ktop exited before it showed all the nodes")
            await asyncio.sleep(0.5)
        raise RuntimeError(f"ktop did not show {self.nodes:,} nodes in {MAX_READY_WAIT_S:.0f} s")

    # -- churn ---------------------------------------------------------------------------
    async def _churn(self, api: Api, target: LabTarget, steps: Sequence[Step]) -> None:
        for step in steps:
            await asyncio.sleep(max(0.0, step.t_s - self.now_s()))
            started = time.monotonic()
            event: dict[str, Any] = {
                "t_s": round(self.now_s(), 1),
                "at": datetime.now(UTC).strftime("%H:%M:%S"),
                "action": step.action,
                "cycle": step.cycle,
                "zone": step.zone,
            }
            event.update(await self._do(api, target, step))
            if event.get("errors"):
                event["error"] = "; ".join(f"{k}: {v}" for k, v in event["errors"].items())
                log(f"churn step {step} partly failed: {event['error']}")
            event["took_s"] = round(time.monotonic() - started, 2)
            self.events.append(event)
            log(f"t={event['t_s']:.0f}s {step.action} ({step.zone}, cycle {step.cycle})")

    async def _do(self, api: Api, target: LabTarget, step: Step) -> dict[str, Any]:
        """One step; its parts (outage, deletions, creations) are done and reported apart,
        so a part that fails on a loaded apiserver does not skip the others.
        """
        c = self.cadence
        out: dict[str, Any] = {}
        errors: dict[str, str] = {}

        async def part(name: str, work: Awaitable[None]) -> None:
            try:
                await asyncio.wait_for(work, STEP_PART_TIMEOUT_S)
            except Exception as exc:
                errors[name] = f"{type(exc).__name__}: {exc}"[:200]

        async def outage() -> None:
            await inject("zone-outage", target, zone=step.zone)

        async def back() -> None:
            await recover("zone-outage", target, zone=step.zone)

        async def create(bodies: list[dict[str, Any]]) -> None:
            def job(body: dict[str, Any]) -> Callable[[], Awaitable[None]]:
                async def run() -> None:
                    await api.create(PODS_PATH, body)
                    self.live_pods[body["metadata"]["name"]] = step.cycle
                    out["pods_created"] = out.get("pods_created", 0) + 1

                return run

            await limited((job(b) for b in bodies), min(8, len(bodies)))

        async def delete_earlier() -> None:
            names = [n for n, cyc in self.live_pods.items() if cyc < step.cycle]

            def job(name: str) -> Callable[[], Awaitable[None]]:
                async def run() -> None:
                    code, _ = await api.request(
                        "DELETE", f"{PODS_PATH}/{name}?gracePeriodSeconds=0"
                    )
                    if code in (200, 202, 404):
                        self.live_pods.pop(name, None)
                        out["pods_deleted"] = out.get("pods_deleted", 0) + 1

                return run

            if names:
                await limited((job(n) for n in names), min(8, len(names)))

        if step.action == "zone down, pods created":
            await part("outage", outage())
            await part("delete", delete_earlier())
            await part(
                "create",
                create(
                    [
                        _pod(f"soak-{step.cycle:03d}-unplaceable-{i:02d}", step.cycle,
                             "unplaceable", {POOL_LABEL: "none"})
                        for i in range(c.pending)
                    ] + [
                        _pod(f"soak-{step.cycle:03d}-web-{i:02d}", step.cycle, "ordinary", None)
                        for i in range(c.ordinary)
                    ]
                ),
            )  # fmt: skip
        elif step.action == "pods pinned to the zone":
            await part(
                "create",
                create(
                    [
                        _pod(f"soak-{step.cycle:03d}-{step.zone}-{i:02d}", step.cycle, "pinned",
                             {ZONE_LABEL: step.zone})
                        for i in range(c.pinned)
                    ]
                ),
            )  # fmt: skip
        else:
            await part("recover", back())
        if errors:
            out["errors"] = errors
        return out

    # -- samples -------------------------------------------------------------------------
    async def _sample_all(self, api: Api, tmux: tools.Tmux) -> None:
        last_cpu, last_t = tools.proc_cpu_s(self.pid), time.monotonic()
        last_clock: str | None = None
        for minute in range(self.minutes + 1):  # bounded: one sample a minute, then stop
            await asyncio.sleep(max(0.0, minute * 60.0 - self.now_s()))
            if minute in self.trace_minutes and self.trace_dir is not None:
                await self._snapshot(minute)
            sample = await self._sample(minute, api, tmux)
            if sample.get("alive"):
                cpu, t = tools.proc_cpu_s(self.pid), time.monotonic()
                if minute:
                    sample["cpu_pct"] = round(100 * (cpu - last_cpu) / (t - last_t), 1)
                last_cpu, last_t = cpu, t
            sample["screen_updated"] = (
                None
                if minute == 0
                else bool(sample["screen_clock"] and sample["screen_clock"] != last_clock)
            )
            last_clock = sample["screen_clock"]
            self.samples.append(sample)
            self.save()
            log(
                f"minute {minute}: RSS {sample.get('rss_mb')} MB, CPU {sample.get('cpu_pct')}%, "
                f"screen {sample['screen_clock']} (behind {sample['screen_lag_s']} s), "
                f"ready on screen {sample['screen_ready']}, in the API {sample['api_ready_nodes']}"
            )
            if not sample.get("alive"):
                raise RuntimeError(f"ktop is gone at minute {minute}")
            if self.now_s() > self.minutes * 60.0 + 600.0:
                raise RuntimeError("the run overran its time by more than 10 minutes")

    async def _snapshot(self, minute: int, timeout_s: float = 300.0) -> None:
        """Ask ktop's tracemalloc thread for a snapshot and wait until it is written."""
        assert self.trace_dir is not None
        (self.trace_dir / f"minute-{minute:03d}.request").touch()
        done = self.trace_dir / f"minute-{minute:03d}.tracemalloc"
        deadline = time.monotonic() + timeout_s
        while not done.exists() or (self.trace_dir / f"minute-{minute:03d}.request").exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no tracemalloc snapshot at minute {minute}")
            await asyncio.sleep(0.5)
        log(f"tracemalloc snapshot at minute {minute}")

    async def _sample(self, minute: int, api: Api, tmux: tools.Tmux) -> dict[str, Any]:
        alive = _alive(self.pid)
        now = datetime.now(UTC)
        s: dict[str, Any] = {
            "minute": minute,
            "t_s": round(self.now_s(), 1),
            "at": now.strftime("%H:%M:%S"),
            "alive": alive,
            "load1": round(os.getloadavg()[0], 2),
        }
        if alive:
            s["rss_mb"] = round(tools.tree_rss_kb(self.pid) / 1024, 1)
            with contextlib.suppress(OSError):
                s["peak_rss_mb"] = round(tools.proc_peak_rss_mb(self.pid), 1)
                s.update(_proc_details(self.pid))
        screen = tmux.screen(SESSION)
        clock = status_clock(screen)
        s["screen_clock"] = clock
        s["screen_lag_s"] = None if clock is None else round(clock_lag_s(clock, now), 1)
        s["screen_ready"] = ready_shown(screen, self.nodes)
        s["status_line"] = status_line(screen)
        s.update(await self._api_counts(api))
        return s

    async def _api_counts(self, api: Api) -> dict[str, Any]:
        """Ready nodes and the soak's pods by phase, as the API says (for comparison)."""
        out: dict[str, Any] = {"api_ready_nodes": None, "api_pods": None}
        try:
            async with api.session.get(
                f"{api.server.url}/api/v1/nodes?includeObject=None", headers={"Accept": TABLE}
            ) as resp:
                body = json.loads(await resp.read())
            out["api_ready_nodes"] = sum(
                1 for row in body.get("rows", []) if str(row["cells"][1]).split(",")[0] == "Ready"
            )
            code, raw = await api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods")
            if code == 200:
                pods: dict[str, int] = {}
                for pod in json.loads(raw).get("items", []):
                    phase = pod.get("status", {}).get("phase", "?")
                    if phase == "Pending" and not pod.get("spec", {}).get("nodeName"):
                        phase = "Pending, unscheduled"
                    pods[phase] = pods.get(phase, 0) + 1
                out["api_pods"] = pods
        except Exception as exc:
            out["api_error"] = f"{type(exc).__name__}: {exc}"[:200]
        return out


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--minutes", type=int, default=60, help="how long ktop runs (default 60)")
    p.add_argument("--nodes", type=int, default=500, help="KWOK nodes (default 500)")
    p.add_argument("--cycle", type=float, default=240.0, help="seconds between outages (240)")
    p.add_argument("--outage", type=float, default=120.0, help="seconds a zone is down (120)")
    p.add_argument("--out", type=Path, default=RESULTS, help="results file")
    p.add_argument(
        "--ktop",
        choices=("commit", "worktree"),
        default="commit",
        help="run ktop as committed at HEAD (default; unpacked apart, so edits made meanwhile "
        "do not change it) or from the working tree as it is",
    )
    p.add_argument(
        "--tracemalloc",
        type=int,
        default=0,
        metavar="FRAMES",
        help="diagnostic: run ktop under tracemalloc (FRAMES deep) and keep what grew between "
        "minute 5, the mark and the end in the results (its RSS is not ktop's alone then)",
    )
    p.add_argument("--lab-dir", type=Path, default=None, help="lab work dir (default: a temp dir)")
    p.add_argument(
        "--docs",
        action="store_true",
        help="do not run: rewrite the soak section of docs/benchmarks.md from --out",
    )
    args = p.parse_args(argv)
    if args.docs:
        write_docs(json.loads(args.out.read_text()))
        print(f"wrote {DOCS.relative_to(ROOT)}", file=sys.stderr)
        return 0
    if args.minutes < 1 or args.nodes < 1:
        p.error("--minutes and --nodes must be at least 1")
    results = Soak(args, sys.argv[1:] if argv is None else argv).run()
    v = results["verdict"]
    log(
        f"last {v['window_minutes']} min: growth {_pct(v['growth'])} "
        f"(target {100 * TARGET_GROWTH:.0f}%): "
        + {True: "passed", False: "FAILED", None: "no verdict"}[v["passed"]]
    )
    return 0 if v["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
