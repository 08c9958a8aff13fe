"""Docs that restate the catalogues are generated; the committed copies must match."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktop.analysis.docgen import DOCS
from ktop.sources.bundle.doc import NAME, bundle_format_md

ALL = {**DOCS, NAME: bundle_format_md}

DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", sorted(ALL))
def test_committed_doc_equals_generated(name: str) -> None:
    committed = (DOCS_DIR / name).read_text(encoding="utf-8")
    assert committed == ALL[name](), f"regenerate {name} (see its first lines)"
