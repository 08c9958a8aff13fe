"""A must-gather's ``etcd_info/`` (``gather_etcd``: ``etcdctl member list``, ``endpoint
status``, ``endpoint health`` and ``alarm list``, each ``-w json``) read as one scrape per
member of the etcd gauges ktop reads: whether it has a leader and is it, its database
size and the part in use, its quota (etcd 3.6's status carries it), its version, and the
alarms standing in the cluster (every member applies every alarm, so each member's scrape
carries them all, each type given, 0 included). A member whose health check failed for
another reason than a standing alarm, or that is listed but gave no status, is a failed
scrape with etcdctl's reason: lost, never healthy. Histograms and counters (fsync,
commit, leader changes) are not in these files and stay unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ktop.files import BUNDLE_FILE, read_bounded
from ktop.model.area_etcd import ALARMS
from ktop.model.events import Area
from ktop.model.scrape_targets import Sample
from ktop.sources.bundle.parts import BundleError, BundleRead
from ktop.structured import InputRefusedError, load_json

ETCD_INFO = "etcd_info"
MEMBER_LIST = "member_list.json"
ENDPOINT_STATUS = "endpoint_status.json"
ENDPOINT_HEALTH = "endpoint_health.json"
ALARM_LIST = "alarm_list.json"
ALARM_TYPES = {1: "NOSPACE", 2: "CORRUPT"}
"""etcd's ``AlarmType`` values (``etcdserverpb``), as ``etcdctl -w json`` writes them."""
ALARM_HEALTH = "Active Alarm(s)"
"""How ``etcdctl endpoint health`` begins its error for a member that answers while an
alarm stands: the alarm is read from the alarm list, the member is not lost."""


@dataclass(slots=True)
class EtcdInfo:
    """Per member (its name, else its client URL's host:port): samples, or why none."""

    samples: dict[str, tuple[Sample, ...]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def _load(root: Path, name: str, out: BundleRead) -> Any:
    rel = f"{ETCD_INFO}/{name}"
    f = root / ETCD_INFO / name
    if not f.is_file():
        out.missing.append(rel)
        return None
    try:
        raw = read_bounded(f, BUNDLE_FILE)
        doc = load_json(raw, rel) if raw.strip() else None
        if doc is not None:
            out.read_from(rel, (Area.ETCD,))
        return doc
    except OSError as exc:
        out.errors.append(BundleError(rel, None, exc.strerror or str(exc)))
    except InputRefusedError as exc:
        out.errors.append(BundleError(rel, None, str(exc).removeprefix(f"{rel}: ")))
    return None


def _host(url: str) -> str:
    parts = urlsplit(url if "//" in url else f"//{url}")
    return parts.netloc or url


def _names(members: Any) -> tuple[dict[int, str], dict[str, str]]:
    """Member ID -> name, and client host:port -> name, from ``member list``."""
    by_id: dict[int, str] = {}
    by_host: dict[str, str] = {}
    listed = members.get("members") if isinstance(members, Mapping) else None
    for m in listed if isinstance(listed, list) else []:
        if not isinstance(m, Mapping) or not isinstance(m.get("name"), str) or not m["name"]:
            continue
        if isinstance(m.get("ID"), int):
            by_id[m["ID"]] = m["name"]
        for url in m.get("clientURLs") or []:
            if isinstance(url, str):
                by_host[_host(url)] = m["name"]
    return by_id, by_host


def _number(d: Mapping[str, Any], key: str) -> float | None:
    v = d.get(key)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _status_samples(status: Mapping[str, Any]) -> tuple[Sample, ...]:
    header = status.get("header") if isinstance(status.get("header"), Mapping) else {}
    me = header.get("member_id") if isinstance(header, Mapping) else None
    leader = status.get("leader")
    out = [
        Sample("etcd_server_has_leader", (), 1.0 if leader else 0.0),
        Sample("etcd_server_is_leader", (), 1.0 if leader and leader == me else 0.0),
    ]
    for key, metric in (
        ("dbSize", "etcd_mvcc_db_total_size_in_bytes"),
        ("dbSizeInUse", "etcd_mvcc_db_total_size_in_use_in_bytes"),
        ("dbSizeQuota", "etcd_server_quota_backend_bytes"),
    ):
        if (v := _number(status, key)) is not None:
            out.append(Sample(metric, (), v))
    if isinstance(status.get("version"), str):
        version = (("server_version", status["version"]),)
        out.append(Sample("etcd_server_version", version, 1.0))
    return tuple(out)


def _alarm_samples(listed: Any, out: BundleRead) -> tuple[Sample, ...] | None:
    """One sample per alarm type, the count of members raising it; None when unreadable."""
    if not isinstance(listed, Mapping):
        return None
    counts = dict.fromkeys(ALARM_TYPES.values(), 0)
    alarms = listed.get("alarms") or []
    if not isinstance(alarms, list):
        out.errors.append(BundleError(f"{ETCD_INFO}/{ALARM_LIST}", None, "alarms is not a list"))
        return None
    for a in alarms:
        value = a.get("alarm") if isinstance(a, Mapping) else None
        kind = ALARM_TYPES.get(value) if type(value) is int else None
        if kind is None:
            why = f"an alarm ktop does not know: {a!r}"[:200]
            out.errors.append(BundleError(f"{ETCD_INFO}/{ALARM_LIST}", None, why))
            continue
        counts[kind] += 1
    return tuple(Sample(ALARMS, (("alarm_type", k),), float(n)) for k, n in counts.items())


def read_etcd_info(root: Path, out: BundleRead) -> EtcdInfo:
    """The members' samples and failures (an absent ``etcd_info/`` is one missing part)."""
    info = EtcdInfo()
    if not (root / ETCD_INFO).is_dir():
        out.missing.append(f"{ETCD_INFO}/ (gather_etcd)")
        return info
    by_id, by_host = _names(_load(root, MEMBER_LIST, out))
    status = _load(root, ENDPOINT_STATUS, out)
    for entry in status if isinstance(status, list) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("Status"), Mapping):
            why = "an entry without Status"
            out.errors.append(BundleError(f"{ETCD_INFO}/{ENDPOINT_STATUS}", None, why))
            continue
        s = entry["Status"]
        header = s.get("header") if isinstance(s.get("header"), Mapping) else {}
        host = _host(str(entry.get("Endpoint", "")))
        name = by_id.get(header.get("member_id", -1)) or by_host.get(host) or host
        info.samples[name] = _status_samples(s)
    health = _load(root, ENDPOINT_HEALTH, out)
    for entry in health if isinstance(health, list) else []:
        if not isinstance(entry, Mapping) or entry.get("health") is not False:
            continue
        if str(entry.get("error", "")).startswith(ALARM_HEALTH):
            continue
        host = _host(str(entry.get("endpoint", "")))
        name = by_host.get(host, host)
        info.samples.pop(name, None)
        info.failed[name] = f"etcdctl endpoint health: {entry.get('error') or 'unhealthy'}"
    for name in sorted(set(by_id.values()) - set(info.samples) - set(info.failed)):
        info.failed[name] = "listed by etcdctl member list, but gave no endpoint status"
    alarms = _alarm_samples(_load(root, ALARM_LIST, out), out)
    if alarms is not None:
        info.samples = {name: (*samples, *alarms) for name, samples in info.samples.items()}
    return info
