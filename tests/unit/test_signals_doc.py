"""docs/panes.md lists every history signal as signals.py declares it (generated block)."""

from __future__ import annotations

from pathlib import Path

from ktop.model.signals import DOC_END, DOC_START, SIGNALS, markdown_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "panes.md"


def test_signals_table_is_generated_from_the_declarations() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split(DOC_START, 1)[1].split(DOC_END, 1)[0].strip()
    assert block == markdown_table(), "run: .venv/bin/python scripts/gen_signals_doc.py"
    for s in SIGNALS:
        assert f"`{s.metric}`" in block
