"""Prometheus text exposition parsing, filtered to the families ktop uses."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ktop.model.events import Sample


@dataclass(frozen=True, slots=True)
class ParsedExposition:
    """Samples kept, and the malformed lines met on the way (line number: problem)."""

    samples: tuple[Sample, ...]
    errors: tuple[str, ...]
    lines_total: int
    lines_kept: int


def parse_exposition(text: str, wanted: Collection[str]) -> ParsedExposition:
    """Parse the samples of the wanted metric families out of an exposition.

    ``wanted`` holds family names; a histogram family ``x`` matches the
    sample names ``x_bucket``, ``x_sum`` and ``x_count``. Lines of other
    families are skipped before any parsing. A malformed line is recorded in
    ``errors`` and skipped; it never stops the rest from being read.
    """
    raise NotImplementedError
