"""docs/recording-format.md restates the writer's settings and every event's fields: generated."""

from __future__ import annotations

import typing
from pathlib import Path

from ktop.model import events as ev
from ktop.record.doc import NAME, render

DOC = Path(__file__).resolve().parents[2] / "docs" / NAME


def test_the_committed_page_equals_the_generated_one() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text == render(text), "run: .venv/bin/python -m ktop.record.doc docs"


def test_every_event_type_and_the_zstd_level_are_on_the_page() -> None:
    from ktop.record.writer import ZSTD_LEVEL

    text = DOC.read_text(encoding="utf-8")
    for cls in typing.get_args(ev.Event):
        assert f"| `{cls.__name__}` |" in text
    assert f"| zstandard level (keyframes and chunks) | {ZSTD_LEVEL} |" in text
