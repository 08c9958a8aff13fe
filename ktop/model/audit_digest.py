"""Audit records folded into who called the apiserver: requests per client and per
minute, with rejections, server errors, latencies and APF classification.

A client is one (user, user agent, verb, resource). Memory is bounded whatever the
log's size: at most :data:`MAX_CLIENTS` clients are tallied (when more appear, the
least busy quarter is dropped, so a client first tallied after a drop may have had
requests counted before and dropped: its counts are lower bounds, which
:attr:`ClientRow.at_least` marks), and each minute keeps its :data:`MINUTE_CLIENTS`
busiest clients the same way. Latencies go
into fixed logarithmic buckets, so a p99 is the upper edge of its bucket.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ktop.model.audit_event import MAX_FIELD_CHARS, MAX_LINE_BYTES, AuditRecord
from ktop.model.flow_match import Classification, RequestFacts

MAX_CLIENTS = 4096
"""Clients tallied at once (each a few hundred bytes)."""
MINUTE_CLIENTS = 64
"""Clients tallied per minute (the busiest of each minute are what is shown)."""
TOP_CLIENTS = 20
"""Clients a digest reports, busiest first (and after them the most rejected, if not
among them)."""
TOP_PER_MINUTE = 5
"""Clients a digest reports for each minute."""
LATENCY_EDGES_S: tuple[float, ...] = tuple(0.001 * 1.5**i for i in range(28))
"""Upper edges of the latency buckets: 1 ms to about 58 s; beyond, the last bucket."""
MAX_PROBLEMS = 20
"""Problems (a malformed line, a cut file) kept word for word; the rest are counted."""
_CACHE = 16384

Classify = Callable[[RequestFacts], Classification | None]
ClientKey = tuple[str, str, str, str]
"""(user, user agent, verb, resource)."""


@dataclass(slots=True)
class _Tally:
    requests: int = 0
    rejected: int = 0
    server_errors: int = 0
    partial: bool = False
    """Tallied after a drop: earlier requests of it may have been dropped."""
    latency: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_EDGES_S) + 1))
    classes: Counter[Classification | None] = field(default_factory=Counter)
    impersonated_by: str = ""


@dataclass(frozen=True, slots=True)
class ClientRow:
    """One client over the whole window."""

    user: str
    user_agent: str
    verb: str
    resource: str
    requests: int
    rejected: int
    """Requests answered 429 Too Many Requests."""
    server_errors: int
    """Requests answered 5xx."""
    peak_per_s: float
    """Its busiest minute's requests per second (0 when no minute kept it)."""
    latency_p99_s: float | None
    """The upper edge of the bucket holding the 99th percentile; None with no latency
    (only long-running requests)."""
    flow_schema: str
    priority_level: str
    """Empty when no FlowSchema matched (or none were given)."""
    at_least: bool = False
    """The counts are lower bounds (it was tallied after others were dropped)."""
    impersonated_by: str = ""

    def sentence(self) -> str:
        """``system:serviceaccount:batch:reporter (python-requests/2.31) list pods``."""
        agent = f" ({self.user_agent})" if self.user_agent else ""
        return f"{self.user}{agent} {self.verb} {self.resource}"


@dataclass(frozen=True, slots=True)
class MinuteRow:
    """One minute: its requests, rejections and busiest clients."""

    minute: float
    """The minute's start (Unix seconds)."""
    requests: int
    rejected: int
    top: tuple[tuple[ClientKey, int, int], ...]
    """(client, requests, rejected), busiest first."""
    users: tuple[tuple[str, int, int], ...] = ()
    """(user, requests, rejected) of the clients the minute kept, summed per user, the
    busiest and the most rejected first (a user's calls of several kinds are one user)."""


@dataclass(frozen=True, slots=True)
class AuditDigest:
    """What the audit logs say about who called the apiserver."""

    files: tuple[str, ...]
    requests: int
    rejected: int
    server_errors: int
    clients: tuple[ClientRow, ...]
    minutes: tuple[MinuteRow, ...]
    classified_by: str
    """Which FlowSchemas classified the requests, in words."""
    first: float | None = None
    last: float | None = None
    """The span of the requests counted (Unix seconds)."""
    problems: tuple[str, ...] = ()
    malformed: int = 0
    outside: int = 0
    """Requests outside the window asked for (not counted)."""
    other_stages: int = 0
    """Events at an earlier stage of a request (not counted: the final stage is)."""
    dropped: int = 0
    """Clients dropped by the memory bound."""

    @property
    def peak(self) -> MinuteRow | None:
        """The minute with the most requests."""
        return max(self.minutes, key=lambda m: (m.requests, -m.minute), default=None)

    @property
    def peak_rejected(self) -> MinuteRow | None:
        """The minute with the most rejections (None when nothing was rejected)."""
        worst = max(self.minutes, key=lambda m: (m.rejected, -m.minute), default=None)
        return worst if worst is not None and worst.rejected else None


def _p99(buckets: list[int]) -> float | None:
    total = sum(buckets)
    if not total:
        return None
    rank, seen = 0.99 * total, 0
    for i, n in enumerate(buckets):
        seen += n
        if seen >= rank:
            return LATENCY_EDGES_S[min(i, len(LATENCY_EDGES_S) - 1)]
    return LATENCY_EDGES_S[-1]


def _users(per: dict[ClientKey, list[int]]) -> tuple[tuple[str, int, int], ...]:
    """A minute's counts summed per user: the busiest, then the most rejected."""
    users: dict[str, list[int]] = {}
    for (user, *_), (n, r) in per.items():
        u = users.setdefault(user, [0, 0])
        u[0] += n
        u[1] += r
    busiest = sorted(users.items(), key=lambda kv: (-kv[1][0], kv[0]))[:TOP_PER_MINUTE]
    rejected = sorted(users.items(), key=lambda kv: (-kv[1][1], kv[0]))[:TOP_PER_MINUTE]
    chosen = dict(busiest + [kv for kv in rejected if kv[1][1]])
    return tuple((u, n, r) for u, (n, r) in chosen.items())


def _trim(tallies: dict[ClientKey, list[int]], keep: int) -> None:
    """Drop the least busy quarter of a minute's counts."""
    ranked = sorted(tallies.items(), key=lambda kv: kv[1][0])
    for k, _ in ranked[: len(ranked) - keep * 3 // 4]:
        del tallies[k]


class AuditFold:
    """Folds audit records (in any order, from several files) into an
    :class:`AuditDigest`, keeping those received in ``[start, end)``.
    """

    def __init__(
        self, classify: Classify, start: float | None = None, end: float | None = None
    ) -> None:
        self._classify = classify
        self._cache: dict[RequestFacts, Classification | None] = {}
        self._start, self._end = start, end
        self._clients: dict[ClientKey, _Tally] = {}
        self._minutes: dict[int, list[int]] = {}
        self._minute_clients: dict[int, dict[ClientKey, list[int]]] = {}
        """Per minute: client -> [requests, rejected]."""
        self.dropped = 0
        self.outside = 0
        self.first: float | None = None
        self.last: float | None = None

    def _classified(self, facts: RequestFacts) -> Classification | None:
        if facts not in self._cache:
            if len(self._cache) >= _CACHE:
                self._cache.clear()
            self._cache[facts] = self._classify(facts)
        return self._cache[facts]

    def _tally(self, key: ClientKey) -> _Tally:
        t = self._clients.get(key)
        if t is None:
            if len(self._clients) >= MAX_CLIENTS:
                ranked = sorted(self._clients.items(), key=lambda kv: kv[1].requests)
                cut = ranked[: MAX_CLIENTS // 4]
                for k, _ in cut:
                    del self._clients[k]
                self.dropped += len(cut)
            t = self._clients[key] = _Tally(partial=self.dropped > 0)
        return t

    def add(self, r: AuditRecord) -> None:
        """Count one request (outside the window: only counted as outside)."""
        if (self._start is not None and r.at < self._start) or (
            self._end is not None and r.at >= self._end
        ):
            self.outside += 1
            return
        self.first = r.at if self.first is None else min(self.first, r.at)
        self.last = r.at if self.last is None else max(self.last, r.at)
        key = (r.facts.user, r.user_agent, r.facts.verb, r.resource)
        rejected = r.code == 429
        t = self._tally(key)
        t.requests += 1
        t.rejected += rejected
        t.server_errors += r.code is not None and r.code >= 500
        if r.latency_s is not None:
            t.latency[bisect.bisect_left(LATENCY_EDGES_S, r.latency_s)] += 1
        level = self._classified(r.facts)
        if len(t.classes) < 4 or level in t.classes:
            t.classes[level] += 1
        t.impersonated_by = t.impersonated_by or r.impersonated_by
        minute = int(r.at // 60 * 60)
        totals = self._minutes.setdefault(minute, [0, 0])
        totals[0] += 1
        totals[1] += rejected
        per = self._minute_clients.setdefault(minute, {})
        if key not in per and len(per) >= MINUTE_CLIENTS:
            _trim(per, MINUTE_CLIENTS)
        counts = per.get(key)
        if counts is None:
            counts = per[key] = [0, 0]
        counts[0] += 1
        counts[1] += rejected

    def _row(self, key: ClientKey, t: _Tally, peak: dict[ClientKey, int]) -> ClientRow:
        cls = t.classes.most_common(1)[0][0] if t.classes else None
        return ClientRow(
            user=key[0],
            user_agent=key[1],
            verb=key[2],
            resource=key[3],
            requests=t.requests,
            rejected=t.rejected,
            server_errors=t.server_errors,
            peak_per_s=peak.get(key, 0) / 60.0,
            latency_p99_s=_p99(t.latency),
            flow_schema=cls.flow_schema if cls else "",
            priority_level=cls.priority_level if cls else "",
            at_least=t.partial,
            impersonated_by=t.impersonated_by,
        )

    def digest(
        self,
        files: Iterable[str],
        classified_by: str,
        problems: Iterable[str] = (),
        malformed: int = 0,
        other_stages: int = 0,
    ) -> AuditDigest:
        """What was folded, with what the reader met on the way."""
        peak: dict[ClientKey, int] = {}
        minutes = []
        for minute in sorted(self._minutes):
            per = self._minute_clients.get(minute, {})
            for k, (n, _) in per.items():
                peak[k] = max(peak.get(k, 0), n)
            top = sorted(per.items(), key=lambda kv: (-kv[1][0], kv[0]))[:TOP_PER_MINUTE]
            requests, rejected = self._minutes[minute]
            minutes.append(
                MinuteRow(
                    float(minute),
                    requests,
                    rejected,
                    tuple((k, n, r) for k, (n, r) in top),
                    _users(per),
                )
            )
        ranked = sorted(self._clients.items(), key=lambda kv: (-kv[1].requests, kv[0]))
        chosen = ranked[:TOP_CLIENTS]
        by_rejected = sorted(self._clients.items(), key=lambda kv: (-kv[1].rejected, kv[0]))
        keys = {k for k, _ in chosen}
        chosen += [
            kv for kv in by_rejected[:TOP_PER_MINUTE] if kv[1].rejected and kv[0] not in keys
        ]
        return AuditDigest(
            files=tuple(files),
            requests=sum(m.requests for m in minutes),
            rejected=sum(m.rejected for m in minutes),
            server_errors=sum(t.server_errors for t in self._clients.values()),
            clients=tuple(self._row(k, t, peak) for k, t in chosen),
            minutes=tuple(minutes),
            classified_by=classified_by,
            first=self.first,
            last=self.last,
            problems=tuple(problems)[:MAX_PROBLEMS],
            malformed=malformed,
            outside=self.outside,
            other_stages=other_stages,
            dropped=self.dropped,
        )


def bounds_markdown() -> str:
    """The bounds above as a Markdown table (docs/audit-logs.md)."""
    rows = [
        ("clients tallied at once", f"{MAX_CLIENTS:,}", "the quietest quarter is dropped"),
        ("clients kept per minute", f"{MINUTE_CLIENTS:,}", "the quietest quarter is dropped"),
        ("clients reported", f"{TOP_CLIENTS:,}", "then the most rejected, if not among them"),
        ("clients reported per minute", f"{TOP_PER_MINUTE:,}", "busiest first"),
        ("problems named word for word", f"{MAX_PROBLEMS:,}", "the rest are counted"),
        ("longest line read", f"{MAX_LINE_BYTES >> 20} MiB", "longer: skipped, named"),
        ("characters kept of a name, agent or path", f"{MAX_FIELD_CHARS:,}", "cut"),
        (
            "latency buckets",
            f"{len(LATENCY_EDGES_S)}",
            f"{LATENCY_EDGES_S[0] * 1000:g} ms to {LATENCY_EDGES_S[-1]:.0f} s, x1.5 each",
        ),
    ]
    out = ["| bound | value | beyond it |", "|---|---|---|"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out) + "\n"
