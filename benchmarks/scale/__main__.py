"""``python -m benchmarks.scale``: run the scale benchmark, or rewrite the docs from results.

    python -m benchmarks.scale run --nodes 1000 10000      # needs the lab's binaries
    python -m benchmarks.scale pure                        # no apiserver: model, frames, parse
    python -m benchmarks.scale docs [RESULTS]              # tables into docs/*.md

``run`` writes the results file (default ``benchmarks/results/scale.json``) and then the docs.
Run labs one at a time on a shared machine (the lab takes both cores at 10,000 nodes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.scale import pure
from benchmarks.scale.run import Options, measure_size
from ktop import __version__, docgen
from ktop.lab.binaries import env_file

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "scale.json"


def machine() -> str:
    """CPU model, cores and memory of this machine."""
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) // (1024 * 1024)
    return f"{os.cpu_count()} cores ({model}), {mem} GiB, Python {platform.python_version()}"


def versions() -> dict[str, str]:
    """Versions of what was measured."""
    out = {"ktop": __version__}
    if env_file().is_file():
        for line in env_file().read_text().splitlines():
            if line.startswith(("KTOP_K8S_VERSION=", "KTOP_ETCD_VERSION=")):
                key, _, value = line.partition("=")
                name = "kube-apiserver" if "K8S" in key else "etcd"
                out[name] = value
    return out


def write_docs(results: dict[str, Any]) -> None:
    """Rewrite the docs' blocks made from the scale results (``make docs`` rewrites them
    from the saved file) from ``results``.
    """
    for path in docgen.write(ROOT, docgen.reading("scale"), {"scale": results}):
        print(f"wrote {path}", file=sys.stderr)


def pure_figures(frames_nodes: int) -> dict[str, Any]:
    """Figures without an apiserver (the frame benchmark runs in its own process)."""
    figures = pure.run()
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.scale.frames", "--nodes", str(frames_nodes)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    frames = json.loads(out.stdout.strip().splitlines()[-1])
    figures["overview_frame_ms_100k"] = frames["overview_frame_ms"]
    figures["publish_ms_100k"] = frames["publish_ms"]
    figures["drill_frame_ms_100k"] = frames["drill_frame_ms"]
    figures["frame_wall_ms_100k"] = frames.get("wall_ms", {})
    figures["ui_rss_mb_100k"] = frames["peak_rss_mb"]
    figures["frames_nodes"] = frames_nodes
    return figures


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = p.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="measure against the lab (and the pure figures)")
    run.add_argument("--nodes", type=int, nargs="+", default=[1_000, 10_000])
    run.add_argument("--pods", type=int, default=1_000, help="pending pods (default 1000)")
    run.add_argument("--runs", type=int, default=3)
    run.add_argument(
        "--runs-at",
        action="append",
        default=[],
        metavar="NODES=RUNS",
        help="fewer (or more) runs at one size, e.g. 50000=1 where one run takes half an hour",
    )
    run.add_argument("--renew-per-s", type=float, default=100.0,
                     help="Lease renewals per second the lab can carry (default 100)")  # fmt: skip
    run.add_argument("--steady-s", type=float, default=30.0)
    run.add_argument("--kwok-nodes", type=int, default=0, help="KWOK-managed nodes as well")
    run.add_argument(
        "--no-racks",
        action="store_true",
        help="nodes without ktop's rack label (ktop then lists them split by zone)",
    )
    run.add_argument("--tools", default="ktop,ktop (UI),kubectl,k9s")
    run.add_argument("--lab-dir", type=Path, default=Path(tempfile.gettempdir()) / "ktop-bench-lab")
    run.add_argument("--frames-nodes", type=int, default=100_000)
    run.add_argument("--contended", default="", help="say what else ran on the machine")
    run.add_argument("--out", type=Path, default=RESULTS)
    run.add_argument("--no-docs", action="store_true")
    run.add_argument(
        "--merge",
        action="store_true",
        help="keep the sizes not measured now from the "
        "results file (the docs' header then names both runs)",
    )
    run.add_argument(
        "--no-pure",
        action="store_true",
        help="skip the figures without apiserver (those of the results file are kept)",
    )
    pu = sub.add_parser("pure", help="only the figures that need no apiserver")
    pu.add_argument("--frames-nodes", type=int, default=100_000)
    pu.add_argument(
        "--merge",
        action="store_true",
        help="write them into the results file (keeping its lab sizes) and rewrite the docs",
    )
    pu.add_argument("--out", type=Path, default=RESULTS)
    docs = sub.add_parser("docs", help="rewrite the generated sections of the docs")
    docs.add_argument("results", type=Path, nargs="?", default=RESULTS)
    args = p.parse_args(argv)

    if args.cmd == "docs":
        write_docs(json.loads(args.results.read_text()))
        return 0
    if args.cmd == "pure":
        figures = pure_figures(args.frames_nodes)
        print(json.dumps(figures, indent=2))
        if args.merge:
            merged = with_pure(json.loads(args.out.read_text()), figures, _run_name(argv))
            _save(args.out, merged)
            write_docs(merged)
        return 0
    o = Options(runs=args.runs, pods=args.pods, renew_per_s=args.renew_per_s,
                steady_s=args.steady_s, idle_s=min(20.0, args.steady_s),
                kwok_nodes=args.kwok_nodes, tools=tuple(args.tools.split(",")),
                racks=not args.no_racks)  # fmt: skip
    load0 = os.getloadavg()[0]
    results: dict[str, Any] = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python -m benchmarks.scale " + shlex.join(argv or sys.argv[1:]),
            "machine": machine(),
            "runs": args.runs,
            "versions": versions(),
        },
        "sizes": [],
    }
    before: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    old = before if args.merge else {}
    runs_at = _runs_at(args.runs_at)
    for n in args.nodes:
        per_node = rss_per_node(results["sizes"] or before.get("sizes", []))
        size = measure_size(
            args.lab_dir, n, replace(o, runs=runs_at.get(n, o.runs), rss_per_node=per_node)
        )
        results["sizes"].append({**size, "runs": runs_at.get(n, o.runs)})
        _save(args.out, {**old, **results})
    if args.merge:
        racks = not args.no_racks
        kept = [
            s
            for s in old.get("sizes", [])
            if s["nodes"] not in args.nodes or s.get("racks", True) != racks
        ]
        results["sizes"] = sorted(
            kept + results["sizes"], key=lambda s: (s["nodes"], not s.get("racks", True))
        )
        if kept:
            results["meta"]["merged"] = kept_note(kept, old["meta"])
    if args.no_pure:
        results["pure"] = before.get("pure", {})
        if results["pure"]:
            results["meta"]["pure_from"] = before["meta"].get("pure_from") or _run_name(
                None, before["meta"]
            )
    else:
        results["pure"] = pure_figures(args.frames_nodes)
    loads = [load0] + [
        s.get(k, 0.0) for s in results["sizes"] for k in ("load_at_start", "load_at_end")
    ]
    note = f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    results["meta"]["contended"] = f"{note}; {args.contended}" if args.contended else note
    for s in results["sizes"]:
        for key in ("kubectl_version", "k9s_version"):
            if key in s:
                results["meta"]["versions"][key.split("_")[0]] = s[key]
    _save(args.out, results)
    if not args.no_docs:
        write_docs(results)
    return 0


def kept_note(kept: list[dict[str, Any]], old_meta: dict[str, Any]) -> str:
    """Which rows a merge kept, and from where: ``1,000 and 10,000 nodes with rack labels:
    from earlier runs`` (a file that was itself merged holds rows of several runs, so only
    an unmerged one names its run).
    """
    parts = []
    for racks, label in ((True, "with rack labels"), (False, "without rack labels")):
        sizes = [format(s["nodes"], ",") for s in kept if s.get("racks", True) == racks]
        if sizes:
            listed = ", ".join(sizes[:-1]) + " and " + sizes[-1] if len(sizes) > 1 else sizes[0]
            parts.append(f"{listed} nodes {label}")
    origin = "earlier runs" if old_meta.get("merged") else _run_name(None, old_meta)
    return f"{'; '.join(parts)}: from {origin}"


def _run_name(argv: list[str] | None, meta: dict[str, Any] | None = None) -> str:
    """``the run of <date> (`<command>`)``: of ``meta``, or of this process."""
    if meta is not None:
        return f"the run of {meta['date']} (`{meta['command']}`)"
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    command = "python -m benchmarks.scale " + shlex.join(argv or sys.argv[1:])
    return f"the run of {date} (`{command}`)"


def with_pure(results: dict[str, Any], figures: dict[str, Any], run: str) -> dict[str, Any]:
    """``results`` with the figures without an apiserver replaced by ``figures`` from
    ``run`` (the lab sizes and their header stay as they were measured).
    """
    return {**results, "pure": figures, "meta": {**results.get("meta", {}), "pure_from": run}}


OTHER_TOOLS = ("kubectl get nodes -o json", "k9s")
"""The tools whose memory grows with the node count past what the machine may hold."""


def rss_per_node(sizes: list[dict[str, Any]]) -> dict[str, tuple[float, int]]:
    """Per tool of :data:`OTHER_TOOLS`, its largest peak resident MB per node and the size
    it was measured at, from the largest size where it was measured.
    """
    out: dict[str, tuple[float, int]] = {}
    for s in sorted(sizes, key=lambda s: s["nodes"]):
        for tool in OTHER_TOOLS:
            peaks = s.get("tools", {}).get(tool, {}).get("peak_rss_mb", [])
            if peaks and s["nodes"] > 0:
                out[tool] = (max(peaks) / s["nodes"], s["nodes"])
    return out


def _runs_at(specs: list[str]) -> dict[int, int]:
    """``["50000=1"]`` as ``{50000: 1}``."""
    out: dict[int, int] = {}
    for spec in specs:
        nodes, sep, runs = spec.partition("=")
        if not sep or not nodes.isdigit() or not runs.isdigit() or int(runs) < 1:
            raise SystemExit(f"--runs-at {spec!r}: expected NODES=RUNS, e.g. 50000=1")
        out[int(nodes)] = int(runs)
    return out


def _save(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
