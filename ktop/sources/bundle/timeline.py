"""A bundle's events as a timeline: what ``ktop replay DIR`` plays for a bundle or an
OpenShift must-gather (``ktop/commands/replay_bundle.py``).

:class:`~ktop.sources.bundle.reader.BundleSource` gives a bundle in one batch, judged at
its time, as ``ktop triage --bundle`` wants it. A replay wants time to pass: the source
starts at the bundle's first event, its scrapes (a must-gather's metrics slice, a
bundle's ``metrics/``) and dumps follow in time order a minute per batch, and the API
objects, which carry no capture time, come at the bundle's time, its end.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ktop.model.events import SourceStarted
from ktop.sources.base import Emit, emit_batched
from ktop.sources.bundle.layout import APF_DIR, API_DIR, METRICS_DIR
from ktop.sources.bundle.must_gather import must_gather_root
from ktop.sources.bundle.parts import BundleRead


def is_bundle(path: Path) -> bool:
    """True for a bundle's directory (``api/``, ``metrics/`` or ``apf/``) or a must-gather."""
    if not path.is_dir():
        return False
    parts = (API_DIR, METRICS_DIR, APF_DIR)
    return any((path / p).is_dir() for p in parts) or must_gather_root(path) is not None


@dataclass(frozen=True, slots=True)
class BundleTimeline:
    """A bundle's events from its first to its time, a minute of them per batch."""

    read: BundleRead
    batch_s: float = 60.0

    @property
    def name(self) -> str:
        """Always ``bundle``."""
        return "bundle"

    async def run(self, emit: Emit) -> None:
        """Emit the events in time order, each batch ending with a clock tick."""
        head, *rest = self.read.events
        start = min((e.at for e in rest), default=head.at)
        emit([replace(head, at=start) if isinstance(head, SourceStarted) else head])
        emit_batched(emit, rest, start, self.batch_s)
