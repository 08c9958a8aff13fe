"""Parsing of the scheduler's FailedScheduling message."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SchedulingFailure:
    """A parsed ``0/N nodes are available: ...`` message."""

    total_nodes: int | None
    reasons: tuple[tuple[str, int], ...]
    """``(reason, node count)`` from the per-node histogram, in message order."""
    prefilter: str
    """A PreFilter message (then there is no per-node histogram), else empty."""
    preemption: str
    """The text after ``preemption:``, else empty."""
    truncated: bool
    """The event text was cut (ends in `` ...``)."""
    raw: str


def parse_failed_scheduling(message: str) -> SchedulingFailure:
    """Parse any known form of the FailedScheduling message. Never raises:
    text that does not parse becomes a single reason equal to the text."""
    raise NotImplementedError


def reason_key(reason: str) -> str:
    """A stable grouping key for a reason across Kubernetes versions.

    ``node(s) had taint {k: v}, that the pod didn't tolerate`` (1.18-1.23) and
    ``node(s) had untolerated taint {k: v}`` (1.24+) both give
    ``untolerated taint {k: v}``; the 1.35 form ``node(s) had untolerated
    taint(s)`` gives ``untolerated taint(s)``; other ``node(s) ...`` prefixes
    are dropped.
    """
    raise NotImplementedError
