"""Every generated block of the docs and README, from one registry (``make docs``).

A generated block is the text between two marker lines of a Markdown file::

    <!-- BEGIN GENERATED name: make docs -->
    ...
    <!-- END GENERATED name -->

Everything outside the markers is written by hand and kept as it is. Markers may be
indented (a block inside a list item); the block's lines are then indented alike.
:data:`BLOCKS` says which function makes which block of which file: a pure function of
the code, or of a benchmark's saved results (``benchmarks/results/*.json``, so no
benchmark is run again).

    python -m ktop.docgen            # rewrite every block
    python -m ktop.docgen --check    # change nothing; exit 1 naming every stale block

The functions are named, not imported, here (``module:function``) and imported only when
a block is made: the benchmarks are not part of the installed package, and the key
table needs Textual.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
"""The checkout's root: every block's path is relative to it."""
RESULTS_DIR = "benchmarks/results"


class MarkerError(ValueError):
    """A document lacks the markers of a generated block, or has them twice."""


def begin(name: str) -> str:
    """The opening marker of block ``name``."""
    return f"<!-- BEGIN GENERATED {name}: make docs -->"


def end(name: str) -> str:
    """The closing marker of block ``name``."""
    return f"<!-- END GENERATED {name} -->"


_ANY_BEGIN = re.compile(r"^[ \t]*<!-- BEGIN GENERATED (\S+?)(?:: .*?)? -->$", re.MULTILINE)


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"^(?P<indent>[ \t]*){re.escape(begin(name))}\n(?P<body>.*?)"
        rf"^(?P=indent){re.escape(end(name))}$",
        re.MULTILINE | re.DOTALL,
    )


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with block ``name``'s contents replaced by ``body`` (indented as its markers)."""
    pattern = _pattern(name)
    found = pattern.findall(text)
    if len(found) != 1:
        raise MarkerError(
            f"expected one generated block {name!r}, found {len(found)}: "
            f"add the lines {begin(name)!r} and {end(name)!r}"
        )

    def block(m: re.Match[str]) -> str:
        indent = m["indent"]
        lines = [indent + line if line else line for line in body.strip("\n").split("\n")]
        return "\n".join([indent + begin(name), *lines, indent + end(name)])

    return pattern.sub(block, text)


def block_text(text: str, name: str) -> str:
    """The contents of block ``name`` of ``text`` (without its markers' indentation)."""
    m = _pattern(name).search(text)
    if m is None:
        raise MarkerError(f"no generated block {name!r}")
    indent = m["indent"]
    return "\n".join(line.removeprefix(indent) for line in m["body"].split("\n")).strip("\n")


@dataclass(frozen=True, slots=True)
class Block:
    """One generated block: where it is and what makes it."""

    path: str
    """The Markdown file, relative to the root."""
    name: str
    make: str
    """``module:function`` that returns the block's Markdown."""
    args: tuple[str, ...] = ()
    """What ``make`` is given, in order: ``results:NAME`` is a benchmark's saved results
    (:func:`load_results`), ``file:PATH`` the text of a file under the root, and
    ``module:attribute`` that object."""

    def __str__(self) -> str:
        return f"{self.path}: {self.name}"


BENCH = "docs/benchmarks.md"
COST = "docs/cost.md"
TABLES = "benchmarks.scale.tables"
TERMINAL = "benchmarks.bench_terminal"

BLOCKS: tuple[Block, ...] = (
    Block(
        "README.md",
        "make-demo",
        "ktop.docgen:make_demo",
        ("file:Makefile", "ktop.sources.sim.scenarios:SCENARIOS"),
    ),
    Block(
        "README.md",
        "keys",
        "ktop.ui.screens.help:keys_markdown",
        ("ktop.ui.app:KtopApp", "ktop.ui.fleet_app:FleetApp"),
    ),
    Block("docs/findings.md", "findings", "ktop.analysis.docgen:findings_md"),
    Block("docs/triage.md", "triage", "ktop.analysis.docgen:triage_md"),
    Block(
        "docs/triage.md",
        "triage-latency",
        "ktop.analysis.docgen:latency_md",
        ("results:triage-latency",),
    ),
    Block(
        "docs/triage.md",
        "triage-sim-latency",
        "ktop.analysis.docgen:sim_latency_md",
        ("results:triage-sim-latency",),
    ),
    Block("docs/bundle-format.md", "bundle-format", "ktop.sources.bundle.doc:bundle_format_md"),
    Block("docs/bundle-format.md", "must-gather", "ktop.sources.bundle.doc:must_gather_md"),
    Block("docs/recording-format.md", "recording-events", "ktop.record.doc:events_md"),
    Block("docs/recording-format.md", "recording-settings", "ktop.record.doc:settings_md"),
    Block("docs/panes.md", "signals", "ktop.model.signals:markdown_table"),
    Block("docs/providers.md", "providers", "ktop.model.providers:providers_markdown"),
    Block("docs/audit-logs.md", "audit-bounds", "ktop.model.audit_digest:bounds_markdown"),
    Block("docs/security.md", "file-limits", "ktop.files:limits_markdown"),
    Block("docs/security.md", "input-limits", "ktop.input_limits:limits_markdown"),
    Block(BENCH, "scale-meta", f"{TABLES}:meta_block", ("results:scale",)),
    Block(BENCH, "scale-start", f"{TABLES}:start_table", ("results:scale",)),
    Block(BENCH, "scale-phases", f"{TABLES}:phases_table", ("results:scale",)),
    Block(BENCH, "scale-steady", f"{TABLES}:steady_table", ("results:scale",)),
    Block(BENCH, "scale-memory", f"{TABLES}:memory_table", ("results:scale",)),
    Block(BENCH, "scale-pure", f"{TABLES}:pure_table", ("results:scale",)),
    Block(BENCH, "scale-targets", f"{TABLES}:targets_table", ("results:scale",)),
    Block(BENCH, "scale-gains", f"{TABLES}:gains_table", ("results:scale",)),
    Block(BENCH, "bench-history", "benchmarks.bench_history:history_md", ("results:history",)),
    Block(BENCH, "scale-recording", f"{TABLES}:recording_table", ("results:scale",)),
    Block(BENCH, "soak", "benchmarks.soak:section", ("results:soak",)),
    Block(COST, "scale-meta", f"{TABLES}:meta_block", ("results:scale",)),
    Block(COST, "scale-representations", f"{TABLES}:representations_table", ("results:scale",)),
    Block(COST, "scale-feeds", f"{TABLES}:feeds_table", ("results:scale",)),
    Block("docs/terminal-bytes.md", "terminal-run", f"{TERMINAL}:run_md", ("results:terminal",)),
    Block(
        "docs/terminal-bytes.md", "terminal-bytes", f"{TERMINAL}:bytes_md", ("results:terminal",)
    ),
)
"""Every generated block, by file in the order they appear."""

_COMPANIONS = {"scale": (("before", "scale-before"), ("recording", "recording"))}
"""Results saved beside a benchmark's own that its tables also read (key, file name): the
scale tables compare with the run before the fixes and show the recording benchmark's."""


def load_results(name: str, root: Path = ROOT, saved: Mapping[str, Any] | None = None) -> Any:
    """Benchmark ``name``'s results (``benchmarks/results/NAME.json``, or ``saved`` when
    given), with the companion results its tables read beside them.
    """
    data = dict(saved) if saved is not None else _read_json(root / RESULTS_DIR / f"{name}.json")
    for key, companion in _COMPANIONS.get(name, ()):
        path = root / RESULTS_DIR / f"{companion}.json"
        if key not in data and path.is_file():
            data[key] = _read_json(path)
    return data


def _read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _imported(ref: str) -> Any:
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def make(block: Block, root: Path = ROOT, results: Mapping[str, Any] | None = None) -> str:
    """Block ``block``'s Markdown (``results``: saved results to use instead of the files)."""
    args: list[Any] = []
    for arg in block.args:
        kind, _, what = arg.partition(":")
        if kind == "results":
            args.append(load_results(what, root, (results or {}).get(what)))
        elif kind == "file":
            args.append((root / what).read_text(encoding="utf-8"))
        else:
            args.append(_imported(arg))
    text = _imported(block.make)(*args)
    if not isinstance(text, str):
        raise TypeError(f"{block.make} returned {type(text).__name__}, not the Markdown")
    return text


def _files(blocks: Iterable[Block]) -> dict[str, list[Block]]:
    out: dict[str, list[Block]] = {}
    for b in blocks:
        out.setdefault(b.path, []).append(b)
    return out


def rendered(
    root: Path = ROOT,
    blocks: Sequence[Block] = BLOCKS,
    results: Mapping[str, Any] | None = None,
) -> tuple[dict[str, str], list[str]]:
    """Every file of ``blocks`` with its blocks made afresh, and the blocks that could not
    be (their markers missing or repeated).
    """
    out: dict[str, str] = {}
    errors: list[str] = []
    for path, entries in _files(blocks).items():
        text = (root / path).read_text(encoding="utf-8")
        for b in entries:
            try:
                text = replace_block(text, b.name, make(b, root, results))
            except MarkerError as exc:
                errors.append(f"{b}: {exc}")
        out[path] = text
    return out, errors


def unregistered(root: Path = ROOT) -> list[str]:
    """Generated blocks of README.md and docs/*.md, in any marker style, that no entry of
    :data:`BLOCKS` makes (one generator: a block written by anything else is stale).
    """
    known = {(b.path, b.name) for b in BLOCKS}
    out = []
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        path = str(doc.relative_to(root))
        for name in _ANY_BEGIN.findall(doc.read_text(encoding="utf-8")):
            if (path, name) not in known:
                out.append(f"{path}: {name}: no entry of ktop/docgen.py BLOCKS makes it")
    return out


def stale(root: Path = ROOT) -> list[str]:
    """``path: name`` of every block whose committed text is not what makes it, every
    block that cannot be made and every block nothing here makes (nothing is written).
    """
    files, out = rendered(root)
    for path, text in files.items():
        committed = (root / path).read_text(encoding="utf-8")
        out += [
            f"{path}: {b.name}"
            for b in BLOCKS
            if b.path == path and _safe_block(text, b.name) != _safe_block(committed, b.name)
        ]
    return out + unregistered(root)


def _safe_block(text: str, name: str) -> str | None:
    try:
        return block_text(text, name)
    except MarkerError:
        return None


def write(
    root: Path = ROOT,
    blocks: Sequence[Block] = BLOCKS,
    results: Mapping[str, Any] | None = None,
) -> list[str]:
    """Rewrite every block of ``blocks`` (``results``: saved results to use instead of the
    files); return the files that changed. MarkerError if a block cannot be written.
    """
    files, errors = rendered(root, blocks, results)
    if errors:
        raise MarkerError("; ".join(errors))
    changed = []
    for path, text in files.items():
        target = root / path
        if target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def reading(name: str) -> tuple[Block, ...]:
    """The blocks made from benchmark ``name``'s results."""
    return tuple(b for b in BLOCKS if f"results:{name}" in b.args)


# -- blocks made here ----------------------------------------------------------------------
_TIMES = {2: "twice as fast as", **{n: f"{w} times faster than" for n, w in enumerate(
    ("three", "four", "five", "six", "seven", "eight", "nine", "ten"), start=3)}}  # fmt: skip


def make_demo(makefile: str, scenarios: Iterable[str]) -> str:
    """README's sentence on ``make demo``: the scenario and speed the Makefile's ``ARGS``
    give ``ktop demo``, and how to pick another of the simulator's ``scenarios``.
    """
    m = re.search(r"^ARGS \?=(.*)$", makefile, re.MULTILINE)
    args = m.group(1).split() if m else []
    opts = dict(zip(args[::2], args[1::2], strict=False))
    scenario = opts.get("--scenario", "steady")
    speed = float(opts.get("--speed", "1"))
    pace = (
        "in real time"
        if speed == 1
        else f"{_TIMES[int(speed)]} real time"
        if speed.is_integer() and int(speed) in _TIMES
        else f"{speed:g} times faster than real time"
    )
    names = list(scenarios)
    other = names[(names.index(scenario) + 1) % len(names)]
    return (
        f"`make demo` plays the `{scenario}` scenario {pace}; "
        f'`make demo ARGS="--scenario {other}"` picks another.'
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite every block, or with ``--check`` name the stale ones (exit 1)."""
    p = argparse.ArgumentParser(prog="python -m ktop.docgen", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = p.parse_args(argv)
    if args.check:
        found = stale(args.root)
        for line in found:
            print(f"stale: {line}", file=sys.stderr)
        if found:
            print("run: make docs", file=sys.stderr)
        return 1 if found else 0
    try:
        changed = write(args.root)
    except MarkerError as exc:
        print(f"ktop.docgen: {exc}", file=sys.stderr)
        return 1
    for path in changed:
        print(f"wrote {path}", file=sys.stderr)
    for line in unregistered(args.root):
        print(f"ktop.docgen: warning: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
