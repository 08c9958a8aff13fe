"""One doc generator (``ktop/docgen.py``, ``make docs``): every generated block of the docs
and README is what its entry makes, and the markers behave.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ktop import docgen


def test_every_generated_block_is_current() -> None:
    stale = docgen.stale()
    assert not stale, "stale generated blocks (run `make docs`):\n" + "\n".join(stale)


DOC = """# Title

Prose before.

{begin}
old table
{end}

Prose after.
"""


def test_a_block_is_replaced_and_the_prose_kept() -> None:
    text = DOC.format(begin=docgen.begin("s"), end=docgen.end("s"))
    out = docgen.replace_block(text, "s", "| new |\n")
    assert "old table" not in out
    assert out.startswith("# Title\n\nProse before.\n\n" + docgen.begin("s") + "\n| new |\n")
    assert out.endswith(docgen.end("s") + "\n\nProse after.\n")
    assert docgen.replace_block(out, "s", "| new |\n") == out
    assert docgen.block_text(out, "s") == "| new |"


def test_an_indented_block_is_written_indented() -> None:
    text = f"* item:\n\n  {docgen.begin('t')}\n  x\n  {docgen.end('t')}\n"
    out = docgen.replace_block(text, "t", "| a |\n\n| b |")
    assert out == f"* item:\n\n  {docgen.begin('t')}\n  | a |\n\n  | b |\n  {docgen.end('t')}\n"
    assert docgen.block_text(out, "t") == "| a |\n\n| b |"


@pytest.mark.parametrize("times", [0, 2])
def test_missing_or_repeated_markers_are_an_error(times: int) -> None:
    block = f"{docgen.begin('s')}\nx\n{docgen.end('s')}\n"
    with pytest.raises(docgen.MarkerError, match="found " + str(times)):
        docgen.replace_block("prose\n" + block * times, "s", "y")


def _copy(tmp_path: Path) -> Path:
    """The files the registry reads and writes, in a scratch root."""
    for rel in {b.path for b in docgen.BLOCKS} | {"Makefile"}:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(docgen.ROOT / rel, tmp_path / rel)
    shutil.copytree(docgen.ROOT / docgen.RESULTS_DIR, tmp_path / docgen.RESULTS_DIR)
    return tmp_path


def test_the_check_names_a_stale_block_and_a_block_nothing_makes(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    doc = root / "docs" / "cost.md"
    text = doc.read_text(encoding="utf-8")
    body = docgen.block_text(text, "scale-feeds")
    doc.write_text(
        docgen.replace_block(text, "scale-feeds", body + "\n| edited by hand |")
        + f"\n{docgen.begin('orphan')}\nx\n{docgen.end('orphan')}\n",
        encoding="utf-8",
    )
    stale = docgen.stale(root)
    assert "docs/cost.md: scale-feeds" in stale
    assert any(line.startswith("docs/cost.md: orphan: ") for line in stale)
    assert docgen.main(["--check", "--root", str(root)]) == 1
    assert docgen.main(["--root", str(root)]) == 0  # rewrites, warns about the orphan
    assert docgen.stale(root) == [s for s in stale if "orphan" in s]


def test_benchmark_blocks_are_made_from_the_saved_results_or_given_ones(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    saved = docgen.load_results("history", root)
    faster = {**saved, "record_s": 1e-6}
    changed = docgen.write(root, docgen.reading("history"), {"history": faster})
    assert changed == ["docs/benchmarks.md"]
    text = (root / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert "| record one frame | 1 µs |" in docgen.block_text(text, "bench-history")
    assert "before" in docgen.load_results("scale", root)  # the tables compare with it


def test_the_make_demo_sentence_follows_the_makefile() -> None:
    scenarios = ["steady", "zone-outage", "etcd-slow-disk"]
    said = docgen.make_demo("ARGS ?= --scenario zone-outage --speed 5\n", scenarios)
    assert said.startswith("`make demo` plays the `zone-outage` scenario five times faster")
    assert '`make demo ARGS="--scenario etcd-slow-disk"` picks another.' in said
    assert "in real time" in docgen.make_demo("ARGS ?= --scenario steady\n", scenarios)
