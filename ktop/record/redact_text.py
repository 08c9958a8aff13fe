"""The shapes of identifiers in free text, for :mod:`ktop.record.redact`.

One regular expression, :data:`IDENTIFIER`, finds every identifier a message of the
control plane may carry that is not known by name yet: Kubernetes users (service
accounts, nodes' users, e-mail addresses, ``User "..."``), groups, objects named after
their kind (``node worker-7``, ``secret "db-password"``, ``persistentvolumeclaim/data-0``),
hostname-label values, EC2-style host names (``ip-10-0-1-23``), IPv6 and IPv4 addresses,
host names and URLs. Its alternatives start only where a word starts and each reads a
bounded stretch, and a word longer than :data:`MAX_WORD` is replaced whole before it runs
(no identifier is that long), so redaction costs a bounded amount of work per character.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from ktop.input_limits import MAX_REDACT_WORD

MAX_WORD = MAX_REDACT_WORD.value
LONG_WORD = re.compile(rf"(?<!\S)\S{{{MAX_WORD + 1},}}")
"""A word longer than any identifier (a DNS name is at most 253 characters)."""

KIND_WORDS: dict[str, str] = {
    "node": "node",
    "pod": "pod",
    "namespace": "ns",
    "persistentvolumeclaim": "pvc",
    "pvc": "pvc",
    "claim": "pvc",
    "persistentvolume": "pv",
    "pv": "pv",
    "volume": "volume",
    "secret": "secret",
    "configmap": "configmap",
    "service": "service",
    "svc": "service",
    "serviceaccount": "sa",
    "endpoints": "service",
    "ingress": "ingress",
    "deployment": "owner",
    "replicaset": "owner",
    "statefulset": "owner",
    "daemonset": "owner",
    "job": "owner",
    "cronjob": "owner",
    "replicationcontroller": "owner",
    "lease": "object",
}
"""Words that name an object's kind in messages, and the stand-in kind of the name after."""
OWNER_KINDS = frozenset(k for k, v in KIND_WORDS.items() if v == "owner")

_KIND = "|".join(sorted(KIND_WORDS, key=len, reverse=True))
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,251}[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})+"
_IPV4 = r"\d{1,3}(?:\.\d{1,3}){3}"
_IPV6 = rf"(?:[0-9A-Fa-f]{{0,4}}:){{2,7}}(?:{_IPV4}|[0-9A-Fa-f]{{1,4}})?(?:%[\w.-]{{1,32}})?"
_NAME = r"[A-Za-z0-9][\w.-]{0,251}\w|[A-Za-z0-9]"
_QUOTED = r'"[^"\n]{0,253}"'
IDENTIFIER = re.compile(
    # every alternative starts where no letter or digit is before: one test per character
    r"(?<![A-Za-z0-9])(?:"
    # User "x", groups ["a" "b"], user=x: a user or group named by its role
    rf"(?P<uword>(?i:\b(?:user(?:name)?|groups?)))"
    rf"(?:(?P<usep>\s*[:=]?\s*)(?P<uval>{_QUOTED}|\[[^\]\n]{{0,2048}}\])"
    rf"|(?P<usep2>\s*[:=]\s*)(?P<ubare>[^\s,;\"'\[\](){{}}]{{1,253}}))"
    # system:serviceaccount:ns:name, system:serviceaccounts:ns, system:node:name
    r"|(?P<system>(?<![\w:-])system:(?:serviceaccounts?|node):[\w.:-]{1,506})"
    # an e-mail address: a user
    r"|(?P<email>(?<![\w.+-])[\w.+-]{1,64}@" + _HOST + r")"
    # kubernetes.io/hostname=worker-7: the value is a node's host name
    r"|(?P<hlabel>(?<![\w./-])(?:[\w.-]{1,253}/)?hostname)(?P<hsep>\s*[=:]\s*\"?)"
    r"(?P<hval>" + _NAME + r")"
    # node worker-7, pods "api-1", secret "db", persistentvolumeclaim/data-0, namespace x
    rf"|(?P<kind>(?i:\b(?:{_KIND})))(?P<ksep>(?:s|es)?(?::?\s+|/)(?i:(?:named|name)\s+)?)"
    rf"(?:\"(?P<qname>[^\"\s]{{1,253}})\"|(?:(?P<ns>[a-z0-9][a-z0-9-]{{0,62}})/)?"
    rf"(?P<name>{_NAME}))"
    # ip-10-0-1-23 (EC2-style host names embed their IP), with its domain if any
    r"|(?P<ec2>(?<![A-Za-z0-9])ip(?:-\d{1,3}){4}(?![\d])(?:\." + _LABEL + r")*)"
    # IPv6 without brackets (validated by the callback)
    rf"|(?P<ipv6>(?<![\w:.])(?:{_IPV6})(?![\w:]))"
    # URLs, IPv4, [IPv6], host names, each with a port; from the start of a word (hyphens
    # before it are read, and given back, so that no attempt starts inside a word)
    r"|(?P<address>(?:https?://)?(?<![A-Za-z0-9-])-*(?:\[[0-9a-fA-F:.%]{2,64}\]|"
    + _IPV4
    + r"|"
    + _HOST
    + r")(?::\d{1,5})?))"
)
"""Every identifier of free text not known by name yet (see the module's docstring)."""

ADDRESS_ONLY = re.compile(
    r"(?:https?://)?(?<![A-Za-z0-9-])-*(?:\[[0-9a-fA-F:.%]{2,64}\]|"
    + _IPV4
    + r"|"
    + _HOST
    + r")(?::\d{1,5})?"
    + rf"|(?<![\w:.])(?:{_IPV6})(?![\w:])"
)
"""Addresses alone (for the fields triage groups by)."""

IPV4_ONLY = re.compile(rf"^{_IPV4}$")
VERSION = re.compile(r"^v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.-]+)?$")
"""Dotted words that are not addresses: version numbers (``v1.35.0-gke.12``) and decimal
numbers (``0.005``), but never a bare IPv4 address (four small numbers)."""
PUBLIC_DOMAIN = re.compile(r"(?:^|\.)(?:kubernetes|k8s|x-k8s)\.io(?:/|$)", re.IGNORECASE)
"""Well-known API groups and label or taint keys (``flowcontrol.apiserver.k8s.io``)."""
LIST_ITEM = re.compile(r"[^\s,\"'\[\]]+")
"""One user or group of a list (``["system:authenticated" "oidc:sre"]``)."""
IDENTIFIER_LIKE = re.compile(r"(?=.*[-.\d])(?=.*[A-Za-z])")
"""A name with a digit, dot or hyphen and a letter: not an ordinary word."""
HOSTNAME_LABEL = re.compile(r"(?:^|[./_])hostname$", re.IGNORECASE)
"""Node labels whose values are host names (``kubernetes.io/hostname``)."""


def long_word(match: re.Match[str]) -> str:
    """The stand-in of a word longer than :data:`MAX_WORD`: its length alone."""
    return f"<{len(match.group(0))} characters>"


def is_ipv6(text: str) -> bool:
    """Whether ``text`` is an IPv6 address (with or without a zone)."""
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return any(c.isalnum() for c in text)


def split_dashes(text: str) -> tuple[str, str]:
    """The hyphens an address match starts with (``--flag-host.example``), and the rest."""
    rest = text.lstrip("-")
    return text[: len(text) - len(rest)], rest


def is_address(text: str) -> bool:
    """Whether a dotted word or URL is an address, not a version, number or public group."""
    if "." not in text and ":" not in text:
        return False
    return bool(IPV4_ONLY.match(text)) or not (VERSION.match(text) or PUBLIC_DOMAIN.search(text))


def derived_kind(extra: list[str]) -> str:
    """The kind of a name made of an owner's name and ``extra`` segments: a ReplicaSet or
    Job (one segment), a StatefulSet's pod (one number) or a pod (two segments).
    """
    if len(extra) == 1 and not extra[0].isdigit():
        return "owner"
    return "pod"


_RUN = re.compile(r"[\w.-]*")
"""A run of name characters (what comes before a known name may not be one of them)."""
_START = re.compile(r"(?<![\w.-])[\w.-]*")
"""Where a known name may start (no name character before it), and the run from there."""
_TAIL = re.compile(r"(?:-[a-z0-9]{1,10}){0,2}(?![\w-])")
"""What may follow a known name: up to two generated segments (an owner's ReplicaSet or
pod, ``-5d4f9c-x7k2p``), then no name character."""

Found = Callable[[str, str], str]
"""The replacement of a known name (the base) followed by derived segments (the extra)."""


class KnownNames:
    """The names a redactor knows, found in text by dictionary lookups: the cost is per
    character of the text, whatever the number of names (a recording of 100,000 nodes
    knows 100,000 node names).

    At each place a name may start, the run of name characters (letters, digits, ``_``,
    ``.``, ``-``) there is cut at its hyphens and dots, and each beginning of it is looked
    up, longest first; a name holding other characters (an address with its port, a user
    name with a space) is kept in a short list under its first run. The longest known name
    that is followed by at most two generated segments and then no name character is
    found, as one regular expression of every name would find it.
    """

    def __init__(self) -> None:
        self.known: dict[str, str] = {}
        """Each name and its stand-in."""
        self._by_run: dict[str, list[str]] = {}
        """The names with other characters than name characters, by their first run,
        longest first."""

    def learn(self, name: str, stand_in: str) -> None:
        """Know ``name`` (its first stand-in stays)."""
        if not name or name in self.known:
            return
        self.known[name] = stand_in
        run = _RUN.match(name)
        head = "" if run is None else run.group(0)
        if len(head) < len(name):
            names = self._by_run.setdefault(head, [])
            names.append(name)
            names.sort(key=len, reverse=True)

    def replace(self, text: str, found: Found) -> str:
        """``text`` with every known name (and what follows it) replaced by ``found``."""
        if not self.known:
            return text
        out: list[str] = []
        done = pos = 0
        size = len(text)
        while pos < size and (m := _START.search(text, pos)) is not None:
            start, run_end = m.span()
            hit = self._at(text, start, m.group(0))
            if hit is None:
                pos = run_end if run_end > start else start + 1
                continue
            base, end = hit
            out += (text[done:start], found(base, text[start + len(base) : end]))
            done = pos = end
        out.append(text[done:])
        return "".join(out)

    def _at(self, text: str, start: int, run: str) -> tuple[str, int] | None:
        """The longest known name at ``start`` (whose run of name characters is ``run``)
        with a valid tail, and where the tail ends; ``None`` when there is none.
        """
        for name in self._by_run.get(run, ()):  # longer than the run: tried first
            if text.startswith(name, start):
                tail = _TAIL.match(text, start + len(name))
                if tail is not None:
                    return name, tail.end()
        known = self.known
        cut = len(run)
        while cut > 0:
            if run[:cut] in known:
                tail = _TAIL.match(text, start + cut)
                if tail is not None:
                    return run[:cut], tail.end()
            cut = max(run.rfind("-", 0, cut), run.rfind(".", 0, cut))
        return None
