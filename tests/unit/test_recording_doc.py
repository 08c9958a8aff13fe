"""docs/recording-format.md restates the writer's settings and every event's fields: generated
(``make docs``; tests/unit/test_docgen.py checks the committed page)."""

from __future__ import annotations

import typing

from ktop.model import events as ev
from ktop.record.doc import events_md, settings_md


def test_every_event_type_and_the_zstd_level_are_in_the_generated_blocks() -> None:
    from ktop.record.writer import ZSTD_LEVEL

    events = events_md()
    for cls in typing.get_args(ev.Event):
        assert f"| `{cls.__name__}` |" in events
    assert f"| zstandard level (keyframes and chunks) | {ZSTD_LEVEL} |" in settings_md()
