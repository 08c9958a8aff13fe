"""Process bookkeeping for the lab.

Every component runs in its own session/process group. Its argv, pid, start time and log
path are recorded in `<lab dir>/state.json`, so any process (the `up` CLI, a pytest fixture,
the scenario injector, `down`) can stop or restart it. A pid is only signalled when
/proc confirms it is still the process we started (same start time), so a recycled pid
is never killed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STATE_FILE = "state.json"


@contextlib.contextmanager
def _locked_state(lab_dir: Path) -> Iterator[dict[str, Any]]:
    """Yield the state dict under an exclusive lock; write it back on exit."""
    lab_dir.mkdir(parents=True, exist_ok=True)
    with open(lab_dir / "state.lock", "a+", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = lab_dir / STATE_FILE
        state: dict[str, Any] = (
            json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        )
        state.setdefault("components", {})
        yield state
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
        tmp.replace(path)


def read_state(lab_dir: Path) -> dict[str, Any]:
    """Return a copy of the lab state (empty dict when there is none)."""
    path = lab_dir / STATE_FILE
    if not path.is_file():
        return {"components": {}}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def update_state(lab_dir: Path, **values: Any) -> None:
    """Set top-level keys of the state file."""
    with _locked_state(lab_dir) as state:
        state.update(values)


def _start_ticks(pid: int) -> int | None:
    """Process start time in clock ticks from /proc, or None if gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def spawn(lab_dir: Path, name: str, argv: list[str], env: dict[str, str] | None = None) -> int:
    """Start component `name` in a new session, logging to `<lab dir>/logs/<name>.log`."""
    log_dir = lab_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    full_env = dict(os.environ)
    full_env.update(env or {})
    with open(log_path, "ab") as log:
        log.write(f"\n=== {time.strftime('%H:%M:%S')} start {' '.join(argv)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=full_env,
            close_fds=True,
        )
    with _locked_state(lab_dir) as state:
        state["components"][name] = {
            "argv": argv,
            "env": env or {},
            "pid": proc.pid,
            "start_ticks": _start_ticks(proc.pid),
            "log": str(log_path),
        }
    return proc.pid


def component(lab_dir: Path, name: str) -> dict[str, Any]:
    """The recorded entry for `name` (KeyError when unknown)."""
    entry: dict[str, Any] = read_state(lab_dir)["components"][name]
    return entry


def is_running(lab_dir: Path, name: str) -> bool:
    """True when `name` was started and its recorded process is still alive."""
    entry = read_state(lab_dir)["components"].get(name)
    if not entry or not entry.get("pid"):
        return False
    pid = int(entry["pid"])
    _reap(pid)
    return bool(_start_ticks(pid) == entry.get("start_ticks"))


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)  # each component leads its own group (start_new_session)


def stop(lab_dir: Path, name: str, *, hard: bool = False, timeout_s: float = 10.0) -> bool:
    """Stop component `name` (SIGTERM, SIGKILL after `timeout_s`; SIGKILL at once if `hard`).

    Returns True when a live process was stopped. The entry stays in the state file (pid
    cleared) so that `restart` can reuse its argv.
    """
    with _locked_state(lab_dir) as state:
        entry = state["components"].get(name)
        if not entry or not entry.get("pid"):
            return False
        pid, ticks = int(entry["pid"]), entry.get("start_ticks")
        entry["pid"] = None
    _reap(pid)
    if ticks is None or _start_ticks(pid) != ticks:
        return False  # already gone (or the pid now belongs to someone else)
    _signal_group(pid, signal.SIGKILL if hard else signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        _reap(pid)
        if _start_ticks(pid) != ticks:
            break
        time.sleep(0.05)
    else:
        _signal_group(pid, signal.SIGKILL)
        time.sleep(0.2)
        _reap(pid)
    # Leftover children in the group (none expected) get SIGKILL too.
    _signal_group(pid, signal.SIGKILL)
    return True


def restart(lab_dir: Path, name: str) -> int:
    """Stop (if running) and start `name` again with its recorded argv and env."""
    entry = component(lab_dir, name)
    stop(lab_dir, name)
    return spawn(lab_dir, name, list(entry["argv"]), dict(entry.get("env") or {}))


def stop_all(lab_dir: Path, order: list[str] | None = None) -> list[str]:
    """Stop every recorded component (those in `order` first); return the names stopped."""
    names = list(read_state(lab_dir)["components"])
    ordered = [n for n in (order or []) if n in names] + [
        n for n in names if n not in (order or [])
    ]
    return [name for name in ordered if stop(lab_dir, name, timeout_s=5.0)]


def running_components(lab_dir: Path) -> list[str]:
    """Names of recorded components whose process is still alive."""
    return [n for n in read_state(lab_dir)["components"] if is_running(lab_dir, n)]


def record_supervisor(lab_dir: Path) -> None:
    """Remember the current process as the lab's foreground supervisor (`up`)."""
    pid = os.getpid()
    update_state(lab_dir, supervisor={"pid": pid, "start_ticks": _start_ticks(pid)})


def signal_supervisor(lab_dir: Path, wait_s: float = 0.0) -> bool:
    """SIGTERM the foreground `up` process of the lab, if it is still the same process, and
    wait up to `wait_s` for it to exit. Returns True when it was signalled.
    """
    sup = read_state(lab_dir).get("supervisor") or {}
    pid = sup.get("pid")
    if not pid or pid == os.getpid() or _start_ticks(int(pid)) != sup.get("start_ticks"):
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(int(pid), signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and _start_ticks(int(pid)) == sup.get("start_ticks"):
        time.sleep(0.1)
    return True
