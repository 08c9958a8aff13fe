"""Consistent stand-ins for names, so a recording can go into a public bug report.

Node, pod and namespace names, the context name and server addresses
(instances, hosts, IP addresses, URLs) are replaced by stand-ins such as
``node-17``, ``pod-3``, ``ns-2``, ``context-1`` and ``server-4``. The same
name always gets the same stand-in within a recording, so the story stays
readable (the node that flapped is the same ``node-17`` everywhere), and free
text (messages, reasons, details) has every known name replaced too.

Zones, regions, racks, metric names and label values ktop groups by (verbs,
codes, priority levels) are kept: triage needs them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ktop.model import events as ev

_ADDRESS = re.compile(
    r"(?:https?://)?"
    r"(?:\[[0-9a-fA-F:]+\]|\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+)"
    r"(?::\d{1,5})?"
)
"""Addresses in free text: URLs, IPv4, bracketed IPv6, dotted host names, with a port."""
_KEEP_DOTTED = re.compile(r"^\d+(?:\.\d+)*$|^[a-z]+\.(?:kubernetes|k8s)\.io", re.IGNORECASE)
"""Dotted words that are not addresses: version numbers, well-known label and taint keys."""


class Redactor:
    """Maps real names to stand-ins, consistently for the life of one recording."""

    def __init__(self) -> None:
        self._maps: dict[str, dict[str, str]] = {}
        self._pattern: re.Pattern[str] | None = None
        self._known: dict[str, str] = {}

    def stand_in(self, kind: str, name: str) -> str:
        """The stand-in of ``name`` (e.g. ``node-3`` for the third node seen)."""
        if not name:
            return name
        m = self._maps.setdefault(kind, {})
        out = m.get(name)
        if out is None:
            out = m[name] = f"{kind}-{len(m) + 1}"
            self._known[name] = out
            self._pattern = None
        return out

    def _address(self, match: re.Match[str]) -> str:
        text = match.group(0)
        if _KEEP_DOTTED.match(text) or ("." not in text and ":" not in text):
            return text
        return self.stand_in("server", text)

    def text(self, text: str) -> str:
        """Free text with every known name and every address replaced."""
        if not text:
            return text
        out = _ADDRESS.sub(self._address, text)
        if self._known:
            if self._pattern is None:
                names = sorted(self._known, key=len, reverse=True)
                self._pattern = re.compile(
                    r"(?<![\w.-])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w-])"
                )
            out = self._pattern.sub(lambda m: self._known.get(m.group(0), m.group(0)), out)
        return out

    def source(self, source: dict[str, str]) -> dict[str, str]:
        """A source description for the header."""
        out = dict(source)
        if out.get("context"):
            out["context"] = self.stand_in("context", out["context"])
        if out.get("detail"):
            out["detail"] = self.text(out["detail"])
        return out

    def _node(self, name: str) -> str:
        return self.stand_in("node", name)

    def _instance(self, instance: str) -> str:
        return self.stand_in("server", instance)

    def event(self, e: ev.Event) -> ev.Event:
        """``e`` with its names replaced."""
        out: Any = e
        match e:
            case ev.NodeUpserted():
                out = replace(e, node=replace(e.node, name=self._node(e.node.name)))
            case ev.NodeDeleted():
                out = replace(e, name=self._node(e.name))
            case ev.LeaseRenewed():
                out = replace(e, node=self._node(e.node))
            case ev.PendingPodUpserted():
                p = e.pod
                out = replace(
                    e,
                    pod=replace(
                        p,
                        namespace=self.stand_in("ns", p.namespace),
                        name=self.stand_in("pod", p.name),
                        node=self._node(p.node) if p.node else "",
                        message=self.text(p.message),
                    ),
                )
            case ev.PendingPodDeleted():
                out = replace(
                    e, namespace=self.stand_in("ns", e.namespace), name=self.stand_in("pod", e.name)
                )
            case ev.WarningEvent():
                kind = {"Pod": "pod", "Node": "node"}.get(e.object_kind, "object")
                out = replace(
                    e,
                    namespace=self.stand_in("ns", e.namespace),
                    object_name=self.stand_in(kind, e.object_name),
                    message=self.text(e.message),
                )
            case ev.QuotaUpserted():
                q = e.quota
                out = replace(
                    e,
                    quota=replace(
                        q,
                        namespace=self.stand_in("ns", q.namespace),
                        name=self.stand_in("quota", q.name),
                    ),
                )
            case ev.QuotaDeleted():
                out = replace(
                    e,
                    namespace=self.stand_in("ns", e.namespace),
                    name=self.stand_in("quota", e.name),
                )
            case ev.MetricsScraped():
                t = replace(e.target, instance=self._instance(e.target.instance))
                out = replace(e, target=t, parse_errors=tuple(self.text(x) for x in e.parse_errors))
            case ev.ScrapeFailed():
                t = replace(e.target, instance=self._instance(e.target.instance))
                out = replace(e, target=t, reason=self.text(e.reason))
            case ev.ApfDumpRead():
                out = replace(e, instance=self._instance(e.instance))
            case ev.ApfDumpFailed():
                out = replace(e, instance=self._instance(e.instance), reason=self.text(e.reason))
            case ev.ApiserverIdentities():
                out = replace(
                    e, identities=tuple(self.stand_in("identity", i) for i in e.identities)
                )
            case ev.SourceStarted():
                out = replace(
                    e, context=self.stand_in("context", e.context), detail=self.text(e.detail)
                )
            case ev.FeedFailed():
                out = replace(e, reason=self.text(e.reason))
        result: ev.Event = out
        return result
