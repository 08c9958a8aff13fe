"""Bytes ktop writes to a real terminal per minute of the demo, normal and low-bandwidth.

Run with ``.venv/bin/python benchmarks/bench_terminal.py [--seconds 60]``; it saves the
figures in ``benchmarks/results/terminal.json`` and rewrites the measured parts of
docs/terminal-bytes.md from them (:func:`run_md`, :func:`bytes_md`; ``make docs``
rewrites them from the saved file).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ktop import docgen

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "terminal.json"
sys.path.insert(0, str(ROOT))

from tests.pty_run import base_env, colour_params, ktop_argv, run_in_pty  # noqa: E402

DEMO = ("demo", "--scenario", "zone-outage", "--speed", "5")
MODES: tuple[tuple[str, tuple[str, ...], dict[str, str]], ...] = (
    ("normal", (), {}),
    ("--low-bandwidth", ("--low-bandwidth",), {}),
    ("NO_COLOR=1", (), {"NO_COLOR": "1"}),
    ("--ascii", ("--ascii",), {}),
    ("--low-bandwidth, NO_COLOR=1, --ascii", ("--low-bandwidth", "--ascii"), {"NO_COLOR": "1"}),
)
SIZES = ((100, 30), (80, 24))
BUDGET_KIB_PER_MIN: dict[tuple[int, int, str], float] = {
    (100, 30, "normal"): 200.0,
    (100, 30, "--low-bandwidth"): 20.0,
}
"""What a minute of the demo may write at most (KiB), by size and mode: usable over a
slow SSH link in normal mode, a tenth of that with ``--low-bandwidth``."""


def measure(seconds: float) -> list[dict[str, Any]]:
    """What ktop wrote in each mode and size."""
    rows = []
    for cols, lines in SIZES:
        for label, extra, env in MODES:
            run = run_in_pty(
                ktop_argv(*DEMO, *extra), env=base_env(**env), size=(cols, lines), seconds=seconds
            )
            rows.append(
                {
                    "cols": cols,
                    "lines": lines,
                    "mode": label,
                    "bytes": len(run.output),
                    "seconds": run.seconds,
                    "colour_params": len(colour_params(run.output)),
                    "non_ascii": sum(
                        1 for ch in run.output.decode("utf-8", "replace") if ord(ch) > 127
                    ),
                }
            )
            print(_row(rows[-1]), flush=True)
    return rows


def _row(r: Mapping[str, Any]) -> str:
    per_min = r["bytes"] * 60 / r["seconds"] / 1024
    budget = BUDGET_KIB_PER_MIN.get((r["cols"], r["lines"], r["mode"]))
    verdict = (
        "-" if budget is None else f"{budget:,.0f} ({'met' if per_min <= budget else 'missed'})"
    )
    return (
        f"| {r['cols']}x{r['lines']} | {r['mode']} | {r['bytes'] / 1024:,.0f} KiB in "
        f"{r['seconds']:.0f} s | **{per_min:,.0f} KiB/min** | {verdict} | "
        f"{r['colour_params']:,} | {r['non_ascii']:,} |"
    )


def run_md(results: Mapping[str, Any]) -> str:
    """What was measured, how and where (the first paragraph of docs/terminal-bytes.md)."""
    seconds = results["seconds"]
    return (
        f"What `ktop {' '.join(DEMO)}` writes to a real pty\n"
        f"(`TERM=xterm-256color`, UTF-8 locale) in {seconds:.0f} s, from the first byte:\n"
        "the start-up frame, then redraws as the zone outage unfolds. Measured on\n"
        f"{results['machine']}, Python {results['python']}, with\n"
        f"`.venv/bin/python benchmarks/bench_terminal.py --seconds {seconds:.0f}`.\n"
    )


def bytes_md(results: Mapping[str, Any]) -> str:
    """The table of bytes per mode and size."""
    head = [
        "| size | mode | written | per minute | at most (KiB/min) | colour SGR params "
        "| non-ASCII chars |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    return "\n".join([*head, *(_row(r) for r in results["rows"])]) + "\n"


def main() -> int:
    """Measure, save the figures and write them into docs/terminal-bytes.md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    results = {
        "seconds": args.seconds,
        "machine": platform.machine(),
        "python": platform.python_version(),
        "rows": measure(args.seconds),
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    for path in docgen.write(ROOT, docgen.reading("terminal"), {"terminal": results}):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
