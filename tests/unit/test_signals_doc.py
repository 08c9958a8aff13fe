"""docs/panes.md lists every history signal as signals.py declares it (a generated block,
``make docs``; tests/unit/test_docgen.py checks the committed page)."""

from __future__ import annotations

from ktop.model.signals import SIGNALS, markdown_table


def test_the_signals_table_has_every_declared_signal() -> None:
    table = markdown_table()
    for s in SIGNALS:
        assert f"`{s.metric}`" in table
