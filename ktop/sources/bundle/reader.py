"""Read an offline bundle into events, with every problem named by file and line.

Any file may be missing: its evidence becomes unknown (a failed feed that says
which file is missing), never an error. A malformed file is reported with its
path and line, and the rest of the bundle is still used; so is a file or directory
where the layout has none (it is not read), and a metrics file with no sample of a
family ktop reads (an error page saved as a scrape). Metrics files are scrapes of
one target at ``<unix-seconds>``; two or more give rates over the window between
the first and the last, one gives lifetime values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ktop.files import BUNDLE_FILE, FileRefusedError, read_bounded
from ktop.model import events as ev
from ktop.model.apf_dump import ApfDumpError, parse_priority_levels
from ktop.model.apf_requests import ApfRequestsError, parse_requests
from ktop.model.events import Area, Event, Target
from ktop.model.exposition import ParsedExposition, parse_exposition, skipped_count
from ktop.model.model_inputs import COMPONENT_AREAS, FEED_AREAS
from ktop.model.text import MAX_CLOCK_S
from ktop.model.wanted import FAMILIES
from ktop.sources.base import Emit
from ktop.sources.bundle.layout import (
    APF_DIR,
    APF_REQUESTS_DIR,
    APF_SUFFIX,
    API_DIR,
    API_RESOURCES,
    COMPONENTS,
    FEEDS,
    METRICS_DIR,
    METRICS_SUFFIX,
)
from ktop.sources.bundle.must_gather import gather, must_gather_root, source_of
from ktop.sources.bundle.parts import BundleError, BundleRead, relative
from ktop.sources.convert import mapping, node_record, parse_time, text
from ktop.sources.live.handlers import (
    LeasesHandler,
    PendingPodsHandler,
    QuotasHandler,
    WarningEventsHandler,
)
from ktop.sources.live.rows import UNREADABLE, Row
from ktop.structured import InputRefusedError, load_json

NODE_LEASE_NAMESPACE = "kube-node-lease"
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
_LINE = re.compile(r"^line (\d+): (.*)$", re.S)
_REFUSED = re.compile(r"^.*? line (\d+): (.*)$", re.S)
"""A refusal of :func:`ktop.structured.load_json` that names the line."""


class BundleNotFoundError(Exception):
    """The directory does not exist or holds none of the bundle's parts."""


def _unix_name(path: Path, suffix: str) -> float | None:
    if not path.name.endswith(suffix):
        return None
    try:
        at = float(path.name[: -len(suffix)])
    except ValueError:
        return None
    return at if 0 <= at <= MAX_CLOCK_S else None


NOT_READ = "not read: {where}"


def _stray(root: Path, d: Path, out: BundleRead, where: str) -> list[Path]:
    """The directories in ``d``; every other entry is reported as not read."""
    dirs = []
    for p in sorted(d.iterdir()):
        if p.is_dir():
            dirs.append(p)
        else:
            out.errors.append(BundleError(relative(root, p), None, NOT_READ.format(where=where)))
    return dirs


def _timed_files(root: Path, d: Path, suffix: str, out: BundleRead) -> list[tuple[float, Path]]:
    files = []
    for f in sorted(d.iterdir()):
        if not f.is_file():
            if f.is_dir():  # the layout has no directory here: said, never read
                why = NOT_READ.format(where=f"a directory inside {relative(root, d)}/")
                out.errors.append(BundleError(relative(root, f), None, why))
            else:  # a FIFO, a device, a dangling link: said, never opened
                out.errors.append(BundleError(relative(root, f), None, "not a regular file"))
            continue
        t = _unix_name(f, suffix)
        if t is None:
            out.errors.append(
                BundleError(relative(root, f), None, f"name must be <unix-seconds>{suffix}")
            )
            continue
        files.append((t, f))
    return sorted(files)


def _read_metrics(root: Path, out: BundleRead) -> list[Event]:
    found: list[Event] = []
    base = root / METRICS_DIR
    if not base.is_dir():
        out.missing.append(f"{METRICS_DIR}/")
        return found
    top = f"files go in {METRICS_DIR}/<component>/<instance>/<unix-seconds>{METRICS_SUFFIX}"
    for comp_dir in _stray(root, base, out, top):
        component = COMPONENTS.get(comp_dir.name)
        if component is None:
            out.errors.append(
                BundleError(
                    relative(root, comp_dir),
                    None,
                    f"unknown component (expected one of {', '.join(COMPONENTS)})",
                )
            )
            continue
        for inst_dir in _stray(root, comp_dir, out, top):
            target = Target(component, inst_dir.name)
            times = []
            for t, f in _timed_files(root, inst_dir, METRICS_SUFFIX, out):
                text = _read_text(root, f, out)
                if text is None:
                    continue
                parsed = parse_exposition(text, FAMILIES[component], check_all=True)
                out.errors += _scrape_errors(relative(root, f), comp_dir.name, parsed, text)
                found.append(ev.MetricsScraped(t, target, parsed.samples, parsed.errors))
                times.append(t)
                if parsed.samples:
                    out.read_from(relative(root, f), COMPONENT_AREAS[component])
            if times:
                out.scrape_windows[target] = (min(times), max(times), len(times))
    return found


def _scrape_errors(
    rel: str, component: str, parsed: ParsedExposition, text: str
) -> list[BundleError]:
    """A metrics file's malformed lines, each with its line number; a file without a
    sample ktop reads (an error page saved as a scrape) is one error, naming its first
    malformed line.
    """
    found = []
    for err in parsed.errors:
        m = _LINE.match(err)
        line, msg = (int(m.group(1)), m.group(2)) if m else (None, err)
        found.append(BundleError(rel, line, msg))
    if parsed.samples or not text.strip():
        return found
    first = f"; {skipped_count(parsed.errors)} malformed, the first: {found[0]}" if found else ""
    why = (
        f"no sample of a metric family ktop reads from {component} in {parsed.lines_total} "
        f"lines (not a /metrics scrape, or another component's){first}"
    )
    return [BundleError(rel, None, why)]


def _read_text(root: Path, f: Path, out: BundleRead) -> str | None:
    """A bundle file's text, or None with the reason kept (not a file, over its limit)."""
    try:
        return read_bounded(f, BUNDLE_FILE).decode("utf-8", errors="replace")
    except OSError as exc:
        out.errors.append(BundleError(relative(root, f), None, _os_reason(exc)))
        return None


def _os_reason(exc: OSError) -> str:
    return str(exc) if isinstance(exc, FileRefusedError) or not exc.strerror else exc.strerror


def _dump_texts(
    root: Path, out: BundleRead, top_dir: str
) -> Iterator[tuple[float, str, Path, str]]:
    """``(time, instance, file, text)`` of every ``<top_dir>/<instance>/<unix-seconds>.txt``
    that can be read; a missing ``top_dir`` is noted, stray entries reported.
    """
    base = root / top_dir
    if not base.is_dir():
        out.missing.append(f"{top_dir}/")
        return
    top = f"files go in {top_dir}/<instance>/<unix-seconds>{APF_SUFFIX}"
    for inst_dir in _stray(root, base, out, top):
        for t, f in _timed_files(root, inst_dir, APF_SUFFIX, out):
            text = _read_text(root, f, out)
            if text is not None:
                yield t, inst_dir.name, f, text


Dumps = Iterable[tuple[float, str, Path, str]]
"""``(time, instance, file, text)`` of APF dumps."""


def _read_apf(root: Path, out: BundleRead, dumps: Dumps) -> list[Event]:
    found: list[Event] = []
    for t, inst, f, body in dumps:
        try:
            found.append(ev.ApfDumpRead(t, inst, parse_priority_levels(body)))
            out.read_from(relative(root, f), (Area.APF,))
        except ApfDumpError as exc:
            m = _LINE.match(str(exc))
            line, msg = (int(m.group(1)), m.group(2)) if m else (None, str(exc))
            out.errors.append(BundleError(relative(root, f), line, msg))
            found.append(ev.ApfDumpFailed(t, inst, f"{relative(root, f)}: {msg}"))
    return found


def _read_apf_requests(root: Path, out: BundleRead, dumps: Dumps) -> list[Event]:
    """``apf-requests/<instance>/<unix-seconds>.txt``: request dumps (top talkers)."""
    found: list[Event] = []
    for t, inst, f, body in dumps:
        try:
            dump = parse_requests(body, t)
        except ApfRequestsError as exc:
            out.errors.append(BundleError(relative(root, f), None, str(exc)))
            found.append(ev.ApfRequestsFailed(t, inst, f"{relative(root, f)}: {exc}"))
            continue
        out.read_from(relative(root, f), (Area.APF,))
        if dump.skipped:
            why = f"{dump.skipped} request rows unreadable (wrong cell count or numbers)"
            out.errors.append(BundleError(relative(root, f), None, why))
        found.append(
            ev.ApfRequestsRead(
                t, inst, dump.talkers, dump.requests, dump.executing_listed, skipped=dump.skipped
            )
        )
    return found


def _load_list(root: Path, name: str, out: BundleRead) -> list[dict[str, Any]] | str:
    """The items of ``api/<name>.json``, or the reason they cannot be used."""
    f = root / API_DIR / f"{name}.json"
    rel = relative(root, f) if f.exists() else f"{API_DIR}/{name}.json"
    if not f.is_file() and not (f.exists() or f.is_symlink()):
        out.missing.append(rel)
        return f"{rel} is not in the bundle"
    try:
        raw = read_bounded(f, BUNDLE_FILE)
        doc = load_json(raw, rel)
    except OSError as exc:
        out.errors.append(BundleError(rel, None, _os_reason(exc)))
        return f"{rel}: {_os_reason(exc)}"
    except InputRefusedError as exc:
        m = _REFUSED.match(str(exc))
        line, msg = (
            (int(m.group(1)), m.group(2)) if m else (None, str(exc).removeprefix(f"{rel}: "))
        )
        out.errors.append(BundleError(rel, line, msg))
        return str(exc)
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        out.errors.append(BundleError(rel, 1, "not a List object with items"))
        return f"{rel}: not a List object"
    items = []
    for i, item in enumerate(doc["items"]):
        if isinstance(item, dict):
            items.append(item)
        else:
            out.errors.append(BundleError(rel, None, f"items[{i}] is not an object"))
    out.list_sizes[name] = (len(items), len(raw))
    return items


def _api_events(
    name: str,
    items: list[dict[str, Any]],
    at: float,
    rack_label: str,
    skipped: list[str] | None = None,
) -> list[Event]:
    """The events of one API file's objects; an object with a field of the wrong type is
    skipped, and what was wrong with it appended to ``skipped``.
    """
    found: list[Event] = []
    convert = _CONVERTERS.get(name)
    if convert is None:
        return found
    identities: list[str] = []
    for i, item in enumerate(items):
        try:
            found += convert(item, at, rack_label, identities)
        except UNREADABLE as exc:
            if skipped is not None:
                skipped.append(f"items[{i}] skipped: {type(exc).__name__}: {str(exc)[:120]}")
    if name == "leases":
        found.append(ev.ApiserverIdentities(at, tuple(sorted(identities))))
    return found


def _node(item: dict[str, Any], at: float, rack_label: str, _: list[str]) -> list[Event]:
    return [ev.NodeUpserted(at, node_record(item, rack_label))]


def _pod(item: dict[str, Any], at: float, _rack: str, _: list[str]) -> list[Event]:
    events = PendingPodsHandler().upsert(at, Row(item))
    return [e for e in events if isinstance(e, ev.PendingPodUpserted)]


def _warning(item: dict[str, Any], at: float, _rack: str, _: list[str]) -> list[Event]:
    if item.get("type") != "Warning":
        return []
    when = (
        parse_time(item.get("lastTimestamp"))
        or parse_time(item.get("eventTime"))
        or parse_time(mapping(item, "series").get("lastObservedTime"))
        or parse_time(item.get("firstTimestamp"))
        or at
    )
    return list(WarningEventsHandler().upsert(min(when, at), Row(item)))


def _lease(item: dict[str, Any], at: float, _rack: str, identities: list[str]) -> list[Event]:
    meta = mapping(item, "metadata")
    if text(meta, "namespace") == NODE_LEASE_NAMESPACE:
        return list(LeasesHandler().upsert(at, Row(item)))
    if IDENTITY_LABEL in mapping(meta, "labels"):
        identities.append(text(meta, "name"))
    return []


def _quota(item: dict[str, Any], at: float, _rack: str, _: list[str]) -> list[Event]:
    return list(QuotasHandler().upsert(at, Row(item)))


_CONVERTERS: dict[str, Callable[[dict[str, Any], float, str, list[str]], list[Event]]] = {
    "nodes": _node,
    "pods": _pod,
    "events": _warning,
    "leases": _lease,
    "resourcequotas": _quota,
}
"""Per API file: one object's events (the lease converter also collects apiserver identities)."""


def _bundle_time(timed: list[Event], api_events: list[Event]) -> float:
    """The latest scrape or dump; without any, the newest Lease renewal or Warning event.

    File modification times are not used: copying a bundle changes them.
    """
    if timed:
        return max(e.at for e in timed)
    stamps = [e.renew_time for e in api_events if isinstance(e, ev.LeaseRenewed)]
    stamps += [e.at for e in api_events if isinstance(e, ev.WarningEvent)]
    return max(stamps, default=0.0)


@dataclass(frozen=True, slots=True)
class BundleSource:
    """A bundle's events in one batch: a bundle is read once, so its source then ends."""

    events: list[Event]

    @property
    def name(self) -> str:
        """Always ``bundle``."""
        return "bundle"

    async def run(self, emit: Emit) -> None:
        """Emit every event of the bundle, in time order."""
        emit(self.events)


def read_bundle(directory: str | Path, rack_label: str = "topology.ktop.dev/rack") -> BundleRead:
    """Every event a bundle (or a must-gather) gives, in time order, and what was wrong
    with it.
    """
    root = Path(directory)
    if not root.is_dir():
        raise BundleNotFoundError(f"{directory}: not a directory")
    out = BundleRead()
    gathered_root = must_gather_root(root)
    if gathered_root is not None:
        g = gather(gathered_root, out)
        root = gathered_root
        timed = _read_apf(root, out, g.apf) + _read_apf_requests(root, out, g.requests)
        timed += g.etcd + g.metrics
        loaded = g.lists
    else:
        parts = [root / API_DIR, root / METRICS_DIR, root / APF_DIR]
        if not any(p.is_dir() for p in parts):
            raise BundleNotFoundError(
                f"{directory}: no {API_DIR}/, {METRICS_DIR}/ or {APF_DIR}/ directory, and "
                "not a must-gather; see docs/bundle-format.md"
            )
        timed = _read_metrics(root, out)
        timed += _read_apf(root, out, _dump_texts(root, out, APF_DIR))
        timed += _read_apf_requests(root, out, _dump_texts(root, out, APF_REQUESTS_DIR))
        loaded = {name: _load_list(root, name, out) for name in API_RESOURCES}
    # API objects carry no capture time: read them at a provisional time, then re-time them.
    provisional = {
        name: _api_events(name, items, float("inf"), rack_label)
        for name, items in loaded.items()
        if not isinstance(items, str)
    }
    at = _bundle_time(timed, [e for evs in provisional.values() for e in evs])
    if gathered_root is not None and g.at is not None:
        at = max(g.at, at)
    out.at = at
    events: list[Event] = [ev.SourceStarted(at, "bundle", root.name, str(directory))]
    events += sorted(timed, key=lambda e: e.at)
    for name, items in loaded.items():
        feeds = FEEDS.get(name, ())
        if isinstance(items, str):
            events += [ev.FeedFailed(at, feed, items) for feed in feeds]
            continue
        skipped: list[str] = []
        events += _api_events(name, items, at, rack_label, skipped)
        rel = source_of(name) if gathered_root is not None else f"{API_DIR}/{name}.json"
        out.read_from(rel, dict.fromkeys(FEED_AREAS[feed] for feed in feeds))
        out.errors += [BundleError(rel, None, why) for why in skipped]
        if skipped:
            events += [
                ev.ObjectsSkipped(at, feed, len(skipped), skipped[0].partition(": ")[2])
                for feed in feeds
            ]
        events += [ev.FeedSynced(at, feed) for feed in feeds]
    events.append(ev.ClockTick(at))
    out.events = events
    return out
