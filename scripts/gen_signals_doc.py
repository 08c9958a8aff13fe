"""Regenerate the signals table in docs/panes.md from ktop/model/signals.py."""

from __future__ import annotations

from pathlib import Path

from ktop.model.signals import DOC_END, DOC_START, markdown_table

DOC = Path(__file__).resolve().parents[1] / "docs" / "panes.md"


def main() -> int:
    """Replace the block between the markers."""
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(DOC_START, 1)
    _, tail = rest.split(DOC_END, 1)
    DOC.write_text(f"{head}{DOC_START}\n{markdown_table()}\n{DOC_END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
