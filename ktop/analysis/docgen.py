"""The pages generated from the catalogues: docs/findings.md and docs/triage.md.

Each function returns the generated block of its page (everything below the title);
``make docs`` (``ktop/docgen.py``) writes them and checks the committed pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ktop.analysis.catalogue import (
    CATALOGUE,
    FLEET_CATALOGUE,
    FLEET_MIN_CELLS,
    FLEET_ONSET_SPREAD,
    STALE_AFTER,
)
from ktop.analysis.trends import BASELINE_MIN_AGE_S
from ktop.analysis.triage.diagnosis import ONSET_SLACK_S
from ktop.analysis.triage.paths import PATHS
from ktop.analysis.triage.timeline import KIND_HOW, KIND_MARK, KIND_WORD, EventKind
from ktop.model.limits import API_SKEW, SKEW_FLOOR


def findings_md() -> str:
    """``docs/findings.md``: every finding code with its thresholds and sources."""
    lines = [
        "Analysis (`ktop/analysis/rules.py`) turns each snapshot into findings. Every",
        "finding has a stable code kept as data in `ktop/analysis/catalogue.py`; a",
        "code never changes meaning and a retired code is not reused. Severities are",
        "OK < INFO < UNKNOWN < WARNING < CRITICAL: evidence that could not be read is",
        "UNKNOWN, never OK.",
        "",
        "Every threshold below is defined once, in the catalogue: the rules, the",
        "colours on screen and this page read it from there. Thresholds are starting",
        "points: the seeds insist the real baseline is the cluster's own normal window",
        "(see `docs/triage.md`). A reading that is unknown produces no finding of its",
        "code; the area's `-010` code and the triage paths report unknown evidence.",
        "",
        "A finding about one signal (its `signal` and `threshold` fields, the threshold",
        "being the first limit below at which it fires) also carries a `trend` from the",
        "signal's history (`ktop/analysis/trends.py`): since when the signal has been beyond",
        "the threshold, and whether it is getting worse, better or staying the same. The",
        "findings screen shows it under the title. The cluster's own normal for a signal",
        "is available to analysis as data: `signal_baseline(snapshot.history, key,",
        "snapshot.at)` (median and spread over the history older than the last "
        f"{BASELINE_MIN_AGE_S:.0f} s),",
        "which triage's baseline-relative evidence uses.",
        "",
        "| code | area | finding | threshold | source |",
        "|---|---|---|---|---|",
    ]
    for r in CATALOGUE:
        sources = "; ".join(dict.fromkeys(t.source for t in r.thresholds)) or r.source
        lines.append(f"| `{r.code}` | {r.area.value} | {r.summary} | {r.threshold} | {sources} |")
    lines += [
        "",
        "An area whose stalest input is older than "
        f"{STALE_AFTER.warn:g} {STALE_AFTER.unit} is shown stale ({STALE_AFTER.source}).",
        "",
        "The error budget of `KT-API-006` is counted by Prometheus over the day so far "
        "(since 00:00 UTC) where ktop reads Prometheus, else by ktop since its first scrape "
        "of the instance; the apiservers drill-down shows every SLO's, with the span "
        "(`38% today`, `38% since 14:02`).",
        "",
        *_skew_md(),
        "",
        "## Fleet",
        "",
        "`ktop fleet` (see `docs/fleet.md`) draws these across cells. A shared cause is the",
        "same probable cause (the triage's cause or an independent suspect, never a",
        "consequence another suspect explains), suspect with bad evidence, in at least",
        f"{FLEET_MIN_CELLS} cells whose onsets lie within {FLEET_ONSET_SPREAD.warn:g} "
        f"{FLEET_ONSET_SPREAD.unit} of each other",
        f"({FLEET_ONSET_SPREAD.source}); paths suspect in exactly the same cells are one cause.",
        "",
        "| code | severity | finding | condition |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| `{r.code}` | {r.severity.name.lower()} | {r.summary} | {r.condition} |"
        for r in FLEET_CATALOGUE
    ]
    lines.append("")
    return "\n".join(lines)


def _split(ratio: float) -> str:
    """The split of two instances' load at a skew of ``ratio``: ``71/29`` at 2.5x."""
    busiest = round(100 * ratio / (ratio + 1))
    return f"{busiest}/{100 - busiest}"


def _skew_md() -> list[str]:
    """Why skew (`KT-API-001`, `KT-API-002`) compares the busiest instance with its peers."""
    warn, critical = API_SKEW.warn or 0.0, API_SKEW.critical or 0.0
    return [
        "Skew (`KT-API-001`, `KT-API-002`, triage `SKEW`, the apiservers pane, the fleet) is",
        "the busiest instance's load over the mean load of the other instances, each load",
        f"counted as at least {SKEW_FLOOR:g} (requests/s or watches). Max / mean, the former",
        "measure, can never pass 2 with two apiservers, the most common set-up, so its",
        "critical limit was out of reach and a rolling restart went unseen. Against its",
        "peers, two instances show any imbalance: a healthy pair split 64/36 reads 1.8x,",
        f"under the warning at {warn:g}x (about {_split(warn)}); at {critical:g}x (about "
        f"{_split(critical)}) one carries nearly",
        "everything, as after a rolling restart, when the clients' watches pile onto the",
        "instance that stayed up and the last one restarted sits near zero. With three",
        "instances, one restarted and its clients spread evenly over the other two reads",
        "2x (no alarm), piled onto one of them 4x. The floor keeps an idle or just",
        f"restarted instance finite (1000 watches against none read {1000 / SKEW_FLOOR:g}x) "
        "and noise near",
        "zero out (4 watches against none read 1x). An instance that does not answer, or",
        "has no value yet (a rate needs two scrapes), is left out; with fewer than two",
        "left, skew is unknown.",
    ]


def _timeline_md() -> list[str]:
    """The incident timeline section of ``docs/triage.md``."""
    lines = [
        "## The incident timeline",
        "",
        "What changed, oldest first: the `i` screen in the app, `timeline` in",
        "`ktop triage --output json` (`docs/triage-json.md`), a timeline section of the text",
        "and Markdown reports, and one-letter marks under the drill-downs' trend charts. It is",
        "a pure function of a snapshot's history and the recording's markers",
        "(`ktop/analysis/triage/timeline.py`), so it reads the same live (ktop's own frames",
        "and, with `--prometheus`, the hour the backfill brought), in a replay (the history",
        "rebuilt from the recording, with its markers) and on a bundle (one capture: only",
        "what a single frame shows, each entry marked before the history).",
        "",
        "| mark | kind | how it is found |",
        "|---|---|---|",
    ]
    lines += [f"| `{KIND_MARK[k]}` | {KIND_WORD[k]} | {KIND_HOW[k]} |" for k in EventKind]
    lines += [
        "",
        "Entries of one kind with the same words within one frame are one line that names",
        "every subject (`etcd-0, etcd-1, etcd-2: no etcd leader`); a folded crossing shows the",
        "worst value. A chart marks the events of its own area, the crossings of its own",
        "reading, the diagnosis and the markers, in the column of their time; the later event",
        "wins a shared column. Sealed history chunks never change, so each is scanned once",
        "and its summary kept (`ktop/analysis/triage/timeline_scan.py`): the first timeline",
        "of an hour of history at one frame a second costs about 0.2 s, each later one about",
        "10 ms, in the publish worker thread.",
    ]
    return lines


def triage_md() -> str:
    """``docs/triage.md``: every triage path, its evidence in order, thresholds, verdict."""
    lines = [
        "ktop's triage follows the symptom-to-evidence paths of the seed documents: from the",
        "symptom, through the evidence in order, to the one shared cause. Each path has a",
        "stable ID. Each piece of evidence is `ok`, `warn`, `bad` or `unknown` (with the",
        "reason: not collected, forbidden, source down, too few samples, no observations in",
        "the window). A path is `suspect`, `clear` or `unknown`, and never `clear` while a",
        "first-line piece of evidence is unknown. Thresholds marked *baseline* compare with",
        "the cluster's own normal; with no baseline yet the evidence is unknown and says so.",
        "",
        "The baseline of a signal is the median of its history's points older than "
        f"{BASELINE_MIN_AGE_S:.0f} s",
        "before the snapshot (`ktop/analysis/triage/baseline.py`). The report names the",
        "history it came from: `Prometheus history, last N min` when `--prometheus` backfilled",
        "the last hour at start (the live screen and `ktop triage --context` then have a",
        "baseline from their first frame), `this run so far` when only ktop's own frames are",
        "old enough, `recording` for `ktop triage --recording` and replays. A bundle holds",
        "one moment: it has no baseline.",
        "",
        "## How the paths are ranked",
        "",
        "`ktop triage` does not print a list of suspects: it makes a differential diagnosis",
        "(`ktop/analysis/triage/diagnosis.py`). Each path declares, as data, the symptoms",
        "(other paths) its problem can cause (`explains` in `ktop/analysis/triage/paths.py`,",
        "the table below; the relation has no cycle). Among the suspect paths:",
        "",
        "1. **Causal structure.** A suspect *explains* another suspect when it declares it and",
        f"   did not begin more than {ONSET_SLACK_S:.0f} s after it (a cause does not start after",
        "   its effect; readings cross their own thresholds at slightly different moments).",
        "   When either has no history (a bundle), the declaration alone holds. A suspect",
        "   another suspect explains is a *consequence*: it is reported as `explained by",
        "   <PATH>` with the reason, never as a suspect on its own, and is listed after the",
        "   path that explains it.",
        "2. **Onset.** The suspects that nothing explains are candidate causes, ordered by",
        "   when their problem began (the earliest start first: what changed first), from the",
        "   history their evidence carries (the path's `since`, `docs/triage-json.md`). A path",
        "   without a history ranks after those with one.",
        "3. **Strength of evidence.** Then by the worst status of their evidence, then by how",
        "   many readings are bad, suspect alone, or past a warning.",
        "",
        "The first candidate is the **probable cause**; the others are **independent",
        "suspects** (second causes their own evidence supports). The report lists the",
        "cause, the consequences it explains, each independent suspect with the",
        "consequences it explains, then `unknown` and `clear` paths. With no suspect path",
        "but a critical finding standing (a reading past its critical limit before any path",
        "is judged suspect), the report says **No probable cause yet** with the findings",
        "(on screen: how many, and the key that lists them), styled as critical; with",
        "neither, **No incident**. The line names the cause by its title and its place (the",
        "zone, etcd member, apiserver instance or priority level of its first suspect",
        "evidence) at every width. `ktop triage` exits 1 when there is a probable cause, an",
        "independent suspect, or a critical finding without either (a consequence always",
        "comes with the suspect that explains it), 0 otherwise.",
        "Text and Markdown reports start with the diagnosis' line;",
        "the JSON report names it in `cause`, `independent` and each path's `role`,",
        "`explained_by` and `onset` (see `docs/triage-json.md`).",
        "",
        "Every simulator scenario declares the path that names the cause it injects",
        "(`cause` in `ktop/sources/sim/scenarios.py`); a unit test plays each one with",
        "other seeds and sizes than the shipped recordings' and expects that path first,",
        "and `steady` to be no incident.",
        "",
        "| path | can explain | how |",
        "|---|---|---|",
    ]
    lines += [
        f"| [{p.id}](#{p.id.lower()}) | [{x.path}](#{x.path.lower()}) | {x.why} |"
        for p in PATHS
        for x in p.explains
    ]
    lines += ["", *_timeline_md()]
    lines += [
        "",
        "## The paths",
        "",
        "| ID | path | first direction |",
        "|---|---|---|",
    ]
    lines += [f"| [{p.id}](#{p.id.lower()}) | {p.title} | {p.direction} |" for p in PATHS]
    for p in PATHS:
        lines += [
            "",
            f"### {p.id}",
            "",
            f"**{p.title}.** Symptom: {p.symptom}. Source: {p.source}.",
            "",
            f"Verdict: {p.verdict}.",
            "",
            f"First direction: {p.direction}.",
            "",
            "Can explain: "
            + (", ".join(f"[{x.path}](#{x.path.lower()})" for x in p.explains) or "nothing")
            + ".",
            "",
            "| # | evidence | reads | computed | threshold | first line | suspect alone | pane |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for i, e in enumerate(p.evidence, 1):
            t = e.threshold.describe() if e.threshold else "-"
            if e.threshold is not None:
                t += f" ({e.threshold.source})"
            if e.baseline:
                t = "*baseline* " + t
            lines.append(
                f"| {i} | `{e.id}` {e.title} | {e.reads} | {e.computed} | {t} | "
                f"{'yes' if e.first_line else 'no'} | "
                f"{e.suspect_at.name.lower() if e.suspect_at is not None else 'never'} | "
                f"{e.pane.value if e.pane else '-'} |"
            )
    lines.append("")
    return "\n".join(lines)


LATENCY_SOURCES = ("kubeconfig only", "component URLs")
"""The two ways the local control plane is watched in tests/e2e/test_triage_kubeadm.py."""


def latency_md(results: Mapping[str, Any]) -> str:
    """``docs/triage.md``: seconds from each injection on the kubeadm-like lab until the
    headline names its cause, watched with the kubeconfig alone and with every component's
    URL (``benchmarks/results/triage-latency.json``, written by the e2e test).
    """
    lines = [
        f"Measured {results['measured']} on {results['cpus']} cores by "
        "`tests/e2e/test_triage_kubeadm.py` (with `KTOP_TRIAGE_LATENCY_OUT` set): a local "
        "control plane laid out as kubeadm lays one out (an address per control-plane host, "
        "the components' pods in kube-system), "
        f"{results['nodes']:,} KWOK nodes, ktop scraping every {results['scrape_s']:g} s, "
        f"finding components every {results['discovery_s']:g} s, a "
        f"{results['window_s']:g} s window. Seconds from the start of the injection until "
        "the headline names the cause (the probable cause of triage); the injection itself "
        "takes part of it (an etcd election, an apiserver restart, the zone's Leases "
        "expiring).",
        "",
        "| scenario | cause named | " + " | ".join(LATENCY_SOURCES) + " | scrape intervals |",
        "|---|---|" + "---:|" * (len(LATENCY_SOURCES) + 1),
    ]
    for scenario, row in results["scenarios"].items():
        worst = max(float(row[s]) for s in LATENCY_SOURCES)
        cells = " | ".join(f"{float(row[s]):.1f} s" for s in LATENCY_SOURCES)
        lines.append(
            f"| {scenario} | {row['cause']} | {cells} | {worst / results['scrape_s']:.1f} |"
        )
    return "\n".join(lines)


def sim_latency_md(results: Mapping[str, Any]) -> str:
    """``docs/triage.md``: seconds from each simulator scenario's first visible symptom
    until triage names its injected cause, at each size and seed measured
    (``benchmarks/results/triage-sim-latency.json``, written by
    ``tests/unit/test_triage_latency_sim.py``).
    """
    step = float(results["step_s"])
    lines = [
        f"Measured {results['measured']} by `tests/unit/test_triage_latency_sim.py` (with "
        "`KTOP_TRIAGE_SIM_LATENCY_OUT` set): each simulator scenario played through a hub, "
        f"one frame every {step:g} s. The symptom is the first frame after the injection "
        "with a finding past its warning that the frames before it did not have, or a "
        "reading far above its own normal; named is the first frame whose probable cause is "
        "the path the scenario injects. Seconds after the simulator's start; the goal is "
        "20 s (two scrape intervals) from symptom to cause.",
        "",
        "| scenario | nodes | zones | seed | symptom | named | symptom to cause |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["runs"]:
        delay = row["delay_s"]
        cells = " | ".join(
            "never" if row[k] is None else f"{float(row[k]):.0f} s"
            for k in ("symptom_s", "named_s")
        )
        lines.append(
            f"| {row['scenario']} | {row['nodes']} | {row['zones']} | {row['seed']} | {cells} "
            f"| {'-' if delay is None else f'{float(delay):.0f} s'} |"
        )
    return "\n".join(lines)
