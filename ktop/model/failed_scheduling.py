"""Parsing of the scheduler's FailedScheduling message.

``FitError.Error()`` writes ``0/N nodes are available:`` and then either a
PreFilter message (`` <msg>.``) or the per-node histogram (``<count>
<reason>`` entries sorted, joined with ``", "``, then ``.``), then the
PostFilter message, if any, after a space. The default PostFilter message is
``preemption: 0/N nodes are available: ...``; other PostFilter plugins can
put their own text before it (DRA: ``no new claims to deallocate,
preemption: ...``). Older releases doubled the final period (``..``), the
Event copy is cut to 1024 bytes and then ends in `` ...``, and reasons may
contain ``,``, ``.``, ``:``, ``/`` and braces (taint keys, extended
resources), so the histogram is split on ``", "`` only where a count follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Counts have at most nine digits (no cluster has a billion nodes): a longer run of
# digits is not a count, and int() of thousands of digits would raise.
_HEAD = re.compile(r"\s*(\d{1,9})/(\d{1,9}) nodes are available:\s*")
_PREEMPTION = re.compile(r"(?:^|\s)preemption:\s")
_ENTRY_SPLIT = re.compile(r", (?=\d{1,9} )")
_ENTRY = re.compile(r"(\d{1,9}) (.*)", re.DOTALL)
_COUNT_FIRST = re.compile(r"\d{1,9} ")
_TRUNCATION = " ..."
MAX_MESSAGE_CHARS = 65536
"""Only this much of a message is parsed (the Event copy is cut at 1024 bytes anyway);
a longer one is read as truncated."""

_NODES_PREFIX = "node(s) "
_TAINT_OLD = re.compile(r"node\(s\) had taint (\{.*\}), that the pod didn't tolerate", re.DOTALL)
_TAINT_NEW = re.compile(r"node\(s\) had untolerated taint (\{.*\})", re.DOTALL)
_TAINTS_ANY = "untolerated taint(s)"
_RENAMED = {
    # Renamed by kubernetes#129887 (about 1.33).
    "had volume node affinity conflict": "didn't match PersistentVolume's node affinity",
    # <= 1.17 wording of what 1.35 again reports without the taint.
    "had taints that the pod didn't tolerate": _TAINTS_ANY,
    "had untolerated taint(s)": _TAINTS_ANY,
}


@dataclass(frozen=True, slots=True)
class SchedulingFailure:
    """A parsed ``0/N nodes are available: ...`` message."""

    total_nodes: int | None
    reasons: tuple[tuple[str, int], ...]
    """``(reason, node count)`` from the per-node histogram, in message order."""
    prefilter: str
    """A PreFilter message (then there is no per-node histogram), else empty."""
    preemption: str
    """The text after ``preemption:``, else empty."""
    truncated: bool
    """The event text was cut (ends in `` ...``)."""
    raw: str
    post_filter: str = ""
    """Other PostFilter text before ``preemption:`` (DRA's ``no new claims to
    deallocate``), else empty."""


def _unparsed(message: str, truncated: bool) -> SchedulingFailure:
    text = message.strip()
    reasons = ((text, 0),) if text else ()
    return SchedulingFailure(None, reasons, "", "", truncated, message)


def _tidy_end(text: str) -> str:
    """Collapse the trailing ``..`` of older releases to one period."""
    text = text.strip()
    while text.endswith(".."):
        text = text[:-1]
    return text


def parse_failed_scheduling(message: str) -> SchedulingFailure:
    """Parse any known form of the FailedScheduling message. Never raises:
    text that does not parse becomes a single reason equal to the text.

    Such a fallback reason has count 0 and ``total_nodes`` is ``None``. A
    histogram entry cut by truncation is kept as it stands (``truncated``
    tells the reader). ``preemption`` keeps the text after ``preemption:``
    with a doubled final period reduced to one.
    """
    text = message.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        message = text = text[:MAX_MESSAGE_CHARS] + _TRUNCATION
    truncated = text.endswith(_TRUNCATION)
    if truncated:
        text = text[: -len(_TRUNCATION)].rstrip()
    head = _HEAD.match(text)
    if head is None:
        return _unparsed(message, truncated)
    total = int(head.group(2))
    body = text[head.end() :]
    preemption = ""
    found = _PREEMPTION.search(body)
    if found is not None:
        preemption = _tidy_end(body[found.end() :])
        body = body[: found.start()]
    body = body.strip()
    post_filter = ""
    if found is not None and body.endswith(","):
        # ``<filter part>. <other post-filter text>, preemption: ...``
        body = body[:-1]
        cut = body.rfind(". ")
        if cut >= 0:
            post_filter = body[cut + 2 :].strip()
            body = body[: cut + 1]
    if not _COUNT_FIRST.match(body):
        prefilter = _tidy_end(body).removesuffix(".").strip()
        return SchedulingFailure(total, (), prefilter, preemption, truncated, message, post_filter)
    reasons: list[tuple[str, int]] = []
    entries = _ENTRY_SPLIT.split(body)
    for position, entry in enumerate(entries):
        if position == len(entries) - 1:
            entry, rest = _split_last(entry)
            if rest and not post_filter:
                post_filter = rest
        matched = _ENTRY.fullmatch(entry)
        if matched is None:  # cannot happen after the split; kept as text
            reasons.append((entry, 0))
            continue
        reasons.append((matched.group(2), int(matched.group(1))))
    return SchedulingFailure(total, tuple(reasons), "", preemption, truncated, message, post_filter)


def _split_last(entry: str) -> tuple[str, str]:
    """Split the last histogram entry from text after its closing period."""
    cut = entry.find(". ")
    if cut >= 0:
        return entry[:cut], entry[cut + 2 :].strip().rstrip(",").strip()
    return entry.rstrip(".").rstrip(), ""


def reason_key(reason: str) -> str:
    """A stable grouping key for a reason across Kubernetes versions.

    ``node(s) had taint {k: v}, that the pod didn't tolerate`` (1.18-1.23) and
    ``node(s) had untolerated taint {k: v}`` (1.24+) both give
    ``untolerated taint {k: v}``; the 1.35 form ``node(s) had untolerated
    taint(s)`` gives ``untolerated taint(s)``; other ``node(s) ...`` prefixes
    are dropped.

    Two more renames are folded: the <= 1.17 ``node(s) had taints that the
    pod didn't tolerate`` also gives ``untolerated taint(s)`` (neither names
    the taint), and ``node(s) had volume node affinity conflict`` gives its
    newer wording ``didn't match PersistentVolume's node affinity``.
    """
    text = reason.strip()
    taint = _TAINT_OLD.fullmatch(text) or _TAINT_NEW.fullmatch(text)
    if taint is not None:
        return f"untolerated taint {taint.group(1)}"
    text = text.removeprefix(_NODES_PREFIX)
    return _RENAMED.get(text, text)
