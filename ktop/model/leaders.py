"""Who leads the scheduler and the controller-manager, from ``leader_election_master_status``.

Both components export ``leader_election_master_status{name}`` (client-go's
leader election: 1 on the instance that holds the Lease, 0 on a standby).
ktop reads it from every scraped instance of each component; a component
whose instances were not scraped, or that exposes no such gauge (leader
election off), is unknown with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ktop.model.events import Component
from ktop.model.series import TargetSeries
from ktop.model.series_window import IDENTITY
from ktop.model.values import Val

LEADER_METRIC = "leader_election_master_status"
ELECTED = (Component.SCHEDULER, Component.CONTROLLER_MANAGER)
"""The components that elect a leader through a Lease."""


@dataclass(frozen=True, slots=True)
class LeaderStatus:
    """One leader-elected component: each scraped instance's status and why it is unknown."""

    component: Component
    instances: tuple[tuple[str, Val], ...] = ()
    """Per scraped instance, the gauge (1 leading, 0 standby), unknown when not exposed."""
    reason: str = ""
    """Why nothing is known (no instance scraped, every scrape failed)."""
    starts: tuple[tuple[str, float | None], ...] = ()
    """Per scraped instance, its process' start time (``process_start_time_seconds``),
    None when not exposed: a restart (a fail-over's cold standby) needs no history."""

    @property
    def leaders(self) -> tuple[str, ...]:
        """The instances that say they lead."""
        return tuple(i for i, v in self.instances if v.value is not None and v.value >= 1)

    @property
    def known(self) -> tuple[tuple[str, float], ...]:
        """The instances whose gauge was read."""
        return tuple((i, v.value) for i, v in self.instances if v.value is not None)


def build_leader(
    component: Component,
    series: Mapping[str, TargetSeries],
    health: Mapping[str, tuple[float | None, str]],
) -> LeaderStatus:
    """A component's leader status from its targets' series and scrape health."""
    rows: list[tuple[str, Val]] = []
    starts = tuple((i, s.gauge(IDENTITY).value) for i, s in sorted(series.items()))
    for inst in sorted(set(series) | set(health)):
        error = health.get(inst, (None, ""))[1]
        s = series.get(inst)
        if error and s is None:
            rows.append((inst, Val.unknown(error)))
        elif s is not None:
            v = s.gauge(LEADER_METRIC)
            rows.append(
                (inst, v if v.value is not None else Val.unknown(f"{LEADER_METRIC} not exposed"))
            )
    if not rows:
        return LeaderStatus(component, (), f"no {component.value} metrics read")
    return LeaderStatus(component, tuple(rows), starts=starts)
