"""Consistent stand-ins for names, so a recording can go into a public bug report.

Node, pod and namespace names, the context name and server addresses
(instances, hosts, IP addresses, URLs) are replaced by stand-ins such as
``node-17``, ``pod-3``, ``ns-2``, ``context-1`` and ``server-4``. The same
name always gets the same stand-in within a recording, so the story stays
readable (the node that flapped is the same ``node-17`` everywhere), and free
text (messages, reasons, details) has every known name replaced too, as well
as names that follow the words ``node`` or ``pod`` even before they are seen.

Every event type is handled here (a test drives each one through a recording):
instances and addresses in metrics targets, their label values (``endpoint``),
ktop's own cost per destination, history keys whose subject is an instance,
and every free-text field.

Zones, regions, racks, metric names and label values ktop groups by (verbs,
codes, priority levels) are kept: triage needs them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ktop.model import events as ev
from ktop.model.signals import BY_METRIC, INST, key, split_key

_ADDRESS = re.compile(
    r"(?:https?://)?"
    r"(?:\[[0-9a-fA-F:]+\]|\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+)"
    r"(?::\d{1,5})?"
)
"""Addresses in free text: URLs, IPv4, bracketed IPv6, dotted host names, with a port."""
_KEEP_DOTTED = re.compile(r"^\d+(?:\.\d+)*$|^[a-z]+\.(?:kubernetes|k8s)\.io", re.IGNORECASE)
"""Dotted words that are not addresses: version numbers, well-known label and taint keys."""
_NAMED = re.compile(
    r"\b(?P<kind>node|pod)(?P<sep>s?:?\s+\"?)"
    r"(?:(?P<ns>[a-z0-9][a-z0-9-]*)/)?(?P<name>[A-Za-z0-9][\w.-]*[\w])"
)
"""A node or pod named in free text (``node worker-7``, ``pod team-a/web-1``)."""
IDENTIFYING_LABELS = frozenset({"endpoint", "instance", "node", "pod", "namespace"})
"""Metric labels whose values are addresses or object names (replaced by stand-ins)."""


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

    def _named(self, match: re.Match[str]) -> str:
        name, ns = match.group("name"), match.group("ns")
        if ns is None and not (re.search(r"[-.\d]", name) and re.search(r"[A-Za-z]", name)):
            return match.group(0)  # an ordinary word or a number ("nodes are available")
        out = self.stand_in(match.group("kind"), name)
        if ns is not None:
            out = f"{self.stand_in('ns', ns)}/{out}"
        return f"{match.group('kind')}{match.group('sep')}{out}"

    def text(self, text: str) -> str:
        """Free text with every known name, named node or pod and every address replaced."""
        if not text:
            return text
        out = _NAMED.sub(self._named, text)
        out = _ADDRESS.sub(self._address, out)
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

    def _target(self, target: ev.Target) -> ev.Target:
        return replace(target, instance=self._instance(target.instance))

    def _sample(self, sample: ev.Sample) -> ev.Sample:
        if not any(k in IDENTIFYING_LABELS for k, _ in sample.labels):
            return sample
        labels = tuple(
            (k, self._instance(v) if k in IDENTIFYING_LABELS else v) for k, v in sample.labels
        )
        return replace(sample, labels=labels)

    def _signal_key(self, signal_key: str) -> str:
        metric, subject = split_key(signal_key)
        spec = BY_METRIC.get(metric)
        if not subject or (spec is not None and spec.subject_label == "zone"):
            return signal_key
        if spec is not None and spec.subject_label == INST:
            return key(metric, self._instance(subject))
        return key(metric, self.text(subject))

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
                out = replace(
                    e,
                    target=self._target(e.target),
                    samples=tuple(self._sample(x) for x in e.samples),
                    parse_errors=tuple(self.text(x) for x in e.parse_errors),
                )
            case ev.ScrapeFailed() | ev.TargetGone():
                out = replace(e, target=self._target(e.target), reason=self.text(e.reason))
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
            case ev.ObjectsSkipped():
                out = replace(e, example=self.text(e.example))
            case ev.SelfCost():
                dests = tuple((self._instance(d), n, b) for d, n, b in e.by_destination)
                out = replace(e, by_destination=dests)
            case ev.HistoryBackfilled():
                series = tuple((self._signal_key(k), pts) for k, pts in e.series)
                out = replace(e, series=series)
            case ev.MetricsOnlyMode():
                out = replace(e, why=self.text(e.why))
            case ev.NodeReadinessByLabel() | ev.ClockTick() | ev.FeedSynced() | ev.LeasesSampled():
                pass  # labels, zones, racks, feed names and numbers: nothing to hide
        result: ev.Event = out
        return result
