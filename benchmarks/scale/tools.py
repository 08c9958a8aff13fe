"""The other tools: finding kubectl and k9s, timing them, and driving TUIs in tmux."""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ktop.lab.binaries import cache_dir

K9S_VERSION = "v0.50.16"
K9S_BUILD = (
    f"GOBIN=${{KTOP_CACHE_DIR:-~/.cache/ktop}}/bin/k9s-{K9S_VERSION} CGO_ENABLED=0 "
    f"go install -trimpath -ldflags '-s -w' github.com/derailed/k9s@{K9S_VERSION}"
)
CLK_TCK = os.sysconf("SC_CLK_TCK")


def find_kubectl() -> tuple[str | None, str]:
    """(path, why not) for kubectl: ``$KTOP_KUBECTL``, the cache, then ``PATH``."""
    env = os.environ.get("KTOP_KUBECTL")
    cached = sorted(cache_dir().glob("bin/kubectl-*/kubectl"))
    for cand in [env, *(str(c) for c in cached), shutil.which("kubectl")]:
        if cand and os.access(cand, os.X_OK):
            return cand, ""
    return None, "no kubectl ($KTOP_KUBECTL, the cache dir or PATH)"


def find_k9s() -> tuple[str | None, str]:
    """(path, why not) for k9s: ``$KTOP_K9S``, the cache dir, then ``PATH``."""
    env = os.environ.get("KTOP_K9S")
    cached = cache_dir() / "bin" / f"k9s-{K9S_VERSION}" / "k9s"
    for cand in [env, str(cached), shutil.which("k9s")]:
        if cand and os.access(cand, os.X_OK):
            return cand, ""
    return None, f"k9s {K9S_VERSION} not built (build it with: {K9S_BUILD})"


def version(argv: list[str]) -> str:
    """The first line a ``--version``-style command prints (or why it failed)."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except OSError as exc:
        return f"unavailable: {exc}"
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else "?"


@dataclass
class CliRun:
    """One timed command."""

    wall_s: float
    peak_rss_mb: float
    stdout_bytes: int
    returncode: int


def timed_command(argv: list[str], env: dict[str, str] | None = None) -> CliRun:
    """Run ``argv`` to completion; wall time, peak RSS of its process tree, output size.

    Peak RSS is sampled from ``/proc`` every 20 ms: ``wait4``'s ``ru_maxrss`` would report
    this (Python) process's size, which a forked child inherits across ``exec``.
    """
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss_kb(proc.pid))
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        size = out.seek(0, os.SEEK_END)
    return CliRun(wall, peak / 1024, size, proc.returncode)


def tree_rss_kb(pid: int) -> int:
    """Resident KiB of ``pid`` and all its descendants now (0 once gone)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and its waited-for children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / CLK_TCK


def proc_peak_rss_mb(pid: int) -> float:
    """Peak resident memory (VmHWM: since its last ``exec``) of ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class TuiRun:
    """A TUI timed in tmux."""

    wall_s: float | None
    peak_rss_mb: float = 0.0
    cpu_pct: dict[str, float] = field(default_factory=dict)
    screen: str = ""


class Tmux:
    """A private tmux server (its own socket) for one TUI at a time."""

    def __init__(self, width: int = 160, height: int = 48) -> None:
        self.socket = f"ktop-bench-{os.getpid()}"
        self.size = (width, height)
        # A session that outlives the measured ones, so the server never exits between runs.
        self._tmux("new-session", "-d", "-s", "keep", "sleep", "86400")

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        return out.stdout

    def screen(self, session: str) -> str:
        """The visible pane text."""
        return self._tmux("capture-pane", "-p", "-t", session)

    async def run(
        self,
        session: str,
        argv: list[str],
        env: dict[str, str],
        done: Callable[[str], bool],
        timeout_s: float,
        windows: dict[str, tuple[float, Callable[[], object] | None]],
    ) -> TuiRun:
        """Start ``argv`` in a ``width x height`` pane; time until ``done(screen)``, then
        measure CPU over each named window (seconds, and a callable run before it; when
        it returns an awaitable, the window starts once that is done).
        """
        cmd = " ".join(["exec", *(_quote(a) for a in argv)])
        envs = [f"{k}={v}" for k, v in env.items()]
        w, h = self.size
        t0 = time.perf_counter()
        self._tmux(
            "new-session", "-d", "-s", session, "-x", str(w), "-y", str(h),
            "env", *envs, "sh", "-c", cmd,
        )  # fmt: skip
        panes = self._tmux("list-panes", "-t", session, "-F", "#{pane_pid}").split()
        if not panes:
            raise RuntimeError(f"{argv[0]} exited at once in tmux")
        pid = int(panes[0])
        result = TuiRun(None)
        try:
            while time.perf_counter() - t0 < timeout_s:
                text = self.screen(session)
                if done(text):
                    result.wall_s = time.perf_counter() - t0
                    break
                await asyncio.sleep(0.1)
            result.screen = self.screen(session)
            if result.wall_s is not None:
                for name, (seconds, before) in windows.items():
                    if before is not None and inspect.isawaitable(ready := before()):
                        await ready
                    c0, w0 = proc_cpu_s(pid), time.perf_counter()
                    await asyncio.sleep(seconds)
                    result.cpu_pct[name] = 100 * (proc_cpu_s(pid) - c0) / (time.perf_counter() - w0)
            result.peak_rss_mb = proc_peak_rss_mb(pid)
        finally:
            self._tmux("kill-session", "-t", session)
        return result

    def close(self) -> None:
        """Stop this private tmux server."""
        self._tmux("kill-server")


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def k9s_shows_all(nodes: int) -> Callable[[str], bool]:
    """k9s' node view title, e.g. ``nodes(all)[10,000]``, names every node."""
    pattern = re.compile(r"[Nn]odes\(\w*\)\[([\d,]+)\]")

    def done(screen: str) -> bool:
        return any(int(m.replace(",", "")) == nodes for m in pattern.findall(screen))

    return done


LEASE_SWEEP = re.compile(r"\(of [\d,]+ read\)")
"""The nodes header while ktop's first sweep of the node Leases runs (``max lease lag 3s
(of 41,500 read)``): ktop is still reading, not idle."""


def ktop_leases_swept(screen: str) -> bool:
    """True once ktop's nodes header no longer says its first Lease sweep is under way."""
    return LEASE_SWEEP.search(screen) is None


def ktop_shows_all(nodes: int) -> Callable[[str], bool]:
    """True when ktop's nodes panel shows ``N/N ready`` (every node listed and Ready)."""
    text = f"{nodes:,}/{nodes:,}"
    return lambda screen: text in screen
