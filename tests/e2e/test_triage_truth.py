"""Lab truth: a one-shot ``ktop triage`` with nothing but a kubeconfig names the cause
that was injected, as a user who runs it during an incident would see it.

Each scenario is injected into a kubeadm-like lab (``ktop/lab/hosts.py``: every
component found from the kubeconfig alone), and ``python -m ktop --kubeconfig K triage
--output json`` runs as the user runs it (default window and scrape interval) 30 s and
90 s after the injection began: both must name the injected cause as the probable
cause. The healthy lab must exit 0. etcd runs as a real cluster's does (its WAL
fsynced), and once more with ``--unsafe-no-fsync`` (the lab's default), where the WAL
fsync histogram never moves: that evidence is unknown, never ok, and the etcd leader
loss is still named.

One lab at a time (a lab costs a start, about 20 s, and two of the machine's cores), a
fresh one for each scenario (the healthy check reads the first scenario's before it is
injected): a scenario leaves its trace in the next one-shot's look-back
(15 minutes: an APF flood's rejections, a leader loss in every member's leader changes,
a restart), which a cluster that had it really would show. Etcd fsyncs its WAL for every
scenario but the leader loss, which runs, with the healthy check, with
``--unsafe-no-fsync`` (the lab's default, as the issue's user ran it).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from ktop.commands.triage import DEFAULT_WINDOW_S
from ktop.lab import Lab, inject, recover, resolve_target
from ktop.lab.inject import DURATION_SCENARIOS
from ktop.lab.scenarios_api import WATCH_FLOOD_S
from tests.e2e.cadence import PROBE_LIMIT_S, PROCESS_START_S, REQUEST_LIMIT_S, deadline
from tests.e2e.helpers import KUBEADM_GROUP, e2e_lab_config, running_lab
from tests.e2e.live import account

XDIST_GROUP = KUBEADM_GROUP
"""Its labs are laid out as kubeadm lays one out: a worker of their own (tests/e2e/conftest.py)."""

MOMENTS_S = (30.0, 90.0)
"""When, after the injection began, the one-shot triage starts."""
TRIAGE_LIMIT_S = deadline(PROCESS_START_S, PROBE_LIMIT_S, DEFAULT_WINDOW_S, REQUEST_LIMIT_S)
"""How long one ``ktop triage`` may take: start, reach the cluster, its window, a request."""
COMPONENTS_ROLE = "ktop-components"


@dataclass(frozen=True)
class Triaged:
    """One run of ``ktop triage``: its exit code, its JSON report, and its stderr."""

    code: int
    doc: dict[str, Any]
    stderr: str

    @property
    def cause(self) -> str | None:
        """The probable cause's path, None for no incident."""
        cause = self.doc.get("cause")
        return None if cause is None else str(cause["id"])

    def evidence(self, path: str, evidence_id: str) -> dict[str, Any]:
        """One evidence of one path of the report."""
        p = next(p for p in self.doc["paths"] if p["id"] == path)
        return next(e for e in p["evidence"] if e["id"] == evidence_id)

    def why(self, expected: str) -> str:
        """What triage said instead, for a failing assertion: the headline, and the
        evidence past ok of each suspect and of the expected path (with its unknowns)."""
        lines = [f"exit {self.code}: {self.doc.get('headline')}"]
        for p in self.doc.get("paths", []):
            if p["verdict"] != "suspect" and p["id"] != expected:
                continue
            shown = [
                f"{e['id']} {e['status']}: {e['detail'][:200]}"
                for e in p["evidence"]
                if e["status"] != "ok"
            ]
            lines.append(f"{p['id']} {p['verdict']}: " + " | ".join(shown))
        return "\n".join(lines)


async def one_shot(kubeconfig: Path) -> Triaged:
    """``ktop --kubeconfig K triage --output json``, as a user runs it."""
    cmd = [sys.executable, "-m", "ktop", "--kubeconfig", str(kubeconfig), "triage"]
    done = await asyncio.to_thread(
        subprocess.run,
        [*cmd, "--output", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=TRIAGE_LIMIT_S,
    )
    assert done.stdout, done.stderr
    return Triaged(done.returncode, json.loads(done.stdout), done.stderr)


class Labs:
    """One lab at a time, in the etcd fsync mode asked, never one a scenario other than
    the one asking was injected into (a healthy check reads a lab no scenario touched);
    asking for another stops the running lab before the next starts."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self.tmp = tmp
        self.unsafe_no_fsync: bool | None = None
        self.used_by: str | None = None
        """The scenario injected into the running lab, if any."""
        self.lab: Lab | None = None
        self.kubeconfig = Path()
        self.stack = ExitStack()

    def get(self, *, unsafe_no_fsync: bool, scenario: str | None = None) -> tuple[Lab, Path]:
        """The lab for ``scenario`` (None: a healthy check) with etcd in that mode, and its
        reader's kubeconfig."""
        touched = self.used_by is not None and self.used_by != scenario
        if self.lab is None or self.unsafe_no_fsync is not unsafe_no_fsync or touched:
            self.stack.close()
            self.stack = ExitStack()
            self.used_by = None
            cfg = replace(
                e2e_lab_config(), kubeadm_hosts=True, etcd_unsafe_no_fsync=unsafe_no_fsync
            )
            name = "ktop-lab-truth-unsafe" if unsafe_no_fsync else "ktop-lab-truth"
            self.lab = self.stack.enter_context(running_lab(self.tmp.mktemp(name), cfg))
            self.unsafe_no_fsync = unsafe_no_fsync
            # docs/rbac.yaml's reader, and its optional role for the components' pods
            self.kubeconfig = asyncio.run(account(self.lab, "ktop-truth", also=(COMPONENTS_ROLE,)))
        self.used_by = scenario or self.used_by
        return self.lab, self.kubeconfig


@pytest.fixture(scope="module")
def labs(binaries_present: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Labs]:
    pool = Labs(tmp_path_factory)
    try:
        yield pool
    finally:
        pool.stack.close()  # the lab running last (each get may replace the stack)


async def _inject_and_triage(lab: Lab, kubeconfig: Path, scenario: str) -> dict[float, Triaged]:
    """Inject ``scenario``, run the one-shot triage at each of :data:`MOMENTS_S` after the
    injection began, then recover."""
    target = resolve_target(lab.layout.kubeconfig)
    began = time.monotonic()
    # as `python -m ktop.lab inject` does: a flood lasts its watchable default; the
    # triage runs beside it. A rolling restart's imbalance lasts until the clients'
    # watches time out (minutes): the load stays on the instance that stayed up through
    # the last one-shot's window (held from the restarted one's readiness on), which must
    # find the incident still under way
    duration = WATCH_FLOOD_S if scenario in DURATION_SCENARIOS else None
    if scenario == "apiserver-skew":
        duration = MOMENTS_S[-1] + DEFAULT_WINDOW_S + REQUEST_LIMIT_S
    injected = asyncio.create_task(inject(scenario, target, duration_s=duration))
    seen: dict[float, Triaged] = {}
    try:
        for moment in MOMENTS_S:
            await asyncio.sleep(max(0.0, began + moment - time.monotonic()))
            seen[moment] = await one_shot(kubeconfig)
    finally:
        result = await injected
        member = result.get("old_leader")
        await recover(scenario, target, member=member)
    return seen


SEEN: dict[tuple[str, bool], dict[float, Triaged]] = {}
"""Each scenario's triages, by (scenario, etcd unsafe-no-fsync): injected once for both
moments' tests."""


def _seen(labs: Labs, scenario: str, *, unsafe_no_fsync: bool = False) -> dict[float, Triaged]:
    key = (scenario, unsafe_no_fsync)
    if key not in SEEN:
        lab, kubeconfig = labs.get(unsafe_no_fsync=unsafe_no_fsync, scenario=scenario)
        SEEN[key] = asyncio.run(_inject_and_triage(lab, kubeconfig, scenario))
    return SEEN[key]


def _names(seen: dict[float, Triaged], moment: float, expected: str) -> None:
    t = seen[moment]
    assert (t.code, t.cause) == (1, expected), t.why(expected)


def test_healthy_lab_with_etcd_fsync_exits_0(labs: Labs) -> None:
    _, kubeconfig = labs.get(unsafe_no_fsync=False)
    t = asyncio.run(one_shot(kubeconfig))
    assert (t.code, t.cause) == (0, None), t.why("")
    # etcd fsyncs: its WAL fsync histogram is observed, and graded
    fsync = t.evidence("ETCD", "etcd.wal_fsync_p99")
    assert fsync["status"] == "ok" and fsync["value"] is not None, fsync


CAUSES = (
    ("scheduler-backlog", "P2"),
    ("apf-saturation", "API-429"),
    ("zone-outage", "P4"),
    ("apiserver-skew", "SKEW"),
)
"""Each scenario and the path that names the cause it injects, each on a fresh lab (the
etcd leader loss with ``--unsafe-no-fsync``: see the module's docstring)."""


@pytest.mark.parametrize("moment", MOMENTS_S, ids=lambda m: f"{m:.0f}s")
@pytest.mark.parametrize(("scenario", "expected"), CAUSES, ids=[c[0] for c in CAUSES])
def test_one_shot_triage_names_the_injected_cause(
    labs: Labs, scenario: str, expected: str, moment: float
) -> None:
    """Each scenario, triaged one-shot 30 s and 90 s after it began, on the lab whose etcd
    fsyncs its WAL.

    Slow: the first moment's test injects, waits for both moments (the last 90 s after
    the injection) and recovers; the second reads what the first saw.
    """
    _names(_seen(labs, scenario), moment, expected)


def test_healthy_lab_with_unsafe_no_fsync_exits_0_and_fsync_is_unknown(labs: Labs) -> None:
    _, kubeconfig = labs.get(unsafe_no_fsync=True)
    t = asyncio.run(one_shot(kubeconfig))
    assert (t.code, t.cause) == (0, None), t.why("")
    # no WAL fsync is ever observed: no reading, never ok
    fsync = t.evidence("ETCD", "etcd.wal_fsync_p99")
    assert (fsync["status"], fsync["value"]) == ("unknown", None), fsync
    assert "no observations" in fsync["detail"], fsync


@pytest.mark.parametrize("moment", MOMENTS_S, ids=lambda m: f"{m:.0f}s")
def test_etcd_leader_loss_is_named_with_unsafe_no_fsync(labs: Labs, moment: float) -> None:
    """The etcd leader loss, triaged one-shot 30 s and 90 s after it began, on the lab
    whose etcd runs with ``--unsafe-no-fsync`` (the WAL fsync evidence unknown).

    Slow: the first moment's test injects, waits for both moments (the last 90 s after
    the injection) and recovers; the second reads what the first saw.
    """
    _names(_seen(labs, "etcd-leader-loss", unsafe_no_fsync=True), moment, "ETCD")
