"""Parsing of ``/debug/api_priority_and_fairness/dump_priority_levels``."""

from __future__ import annotations

from ktop.model.events import ApfLevelDump


class ApfDumpError(ValueError):
    """The dump is not in any known format."""


def parse_priority_levels(text: str) -> tuple[ApfLevelDump, ...]:
    """Parse a ``dump_priority_levels`` text (6-column <=1.26 or 10-column >=1.27 form)."""
    raise NotImplementedError
