"""Consistent stand-ins for names, so a recording can go into a public bug report.

Node, pod and namespace names, the names of the pods' owners (a pod
``api-5d4f9c-x7k2p`` makes ``api-5d4f9c`` and ``api`` known), the context
name and server addresses (instances, hosts, IP addresses, URLs) are replaced
by stand-ins such as ``node-17``, ``pod-3``, ``ns-2``, ``owner-5``,
``context-1`` and ``server-4``. The same name always gets the same stand-in
within a recording, so the story stays readable (the node that flapped is the
same ``node-17`` everywhere), and free text (messages, reasons, details) has
every known name replaced too (and the names derived from a known owner:
its ReplicaSet ``api-5d4f`` and pods), as well as, even before they are seen,
users, groups, service accounts, objects named after their kind (``node x``,
``secret "y"``), hostname-label values, EC2-style host names and IPv6 addresses
(:mod:`ktop.record.redact_text`). One name gets one stand-in whatever kind it
is met as.

Every event type is handled here (a test drives each one through a recording):
instances and addresses in metrics targets, ktop's own cost per destination,
history keys whose subject is an instance, and every free-text field. Metric
samples keep only the labels the model reads (the others, such as
kube-state-metrics' ``host_ip`` or ``created_by_name``, are dropped, as the
model drops them); of those, the values that name an object or an address get
stand-ins.

After the field-by-field replacement every remaining string of the event goes
through a last sweep: IP addresses and host names become stand-ins in *any*
field, and known names in every field but :data:`VERBATIM_FIELDS`. Zones,
regions, racks, metric names and the label values ktop groups by (verbs,
codes, priority levels) are kept: triage needs them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import replace
from enum import Enum
from typing import Any

from ktop.model import events as ev
from ktop.model.apf_requests import OTHERS
from ktop.model.promql import INST
from ktop.model.reading import key, split_key
from ktop.model.series import kept_labels
from ktop.model.signals import BY_METRIC
from ktop.record import redact_text as rt

LABEL_KINDS: dict[str, str] = {
    "endpoint": "server",
    "instance": "server",
    "node": "node",
    "pod": "pod",
    "namespace": "ns",
}
"""Metric labels whose values are addresses or object names, and the stand-in kind each
gets (a node label's value becomes the same ``node-N`` as the node itself)."""
IDENTIFYING_LABELS = frozenset(LABEL_KINDS)
VERBATIM_FIELDS = frozenset(
    {
        ("Sample", "name"),
        ("NodeRecord", "region"),
        ("NodeRecord", "zone"),
        ("NodeRecord", "rack"),
        ("ApfLevelDump", "priority_level"),
        ("ApfTalker", "priority_level"),
        ("ApfTalker", "flow_schema"),
        ("ApfTalker", "what"),
        ("SelfCost", "priority_level"),
        ("SelfCost", "flow_schema"),
        ("WarningEvent", "reason"),
        ("WarningEvent", "object_kind"),
        ("SourceStarted", "kind"),
        ("ProviderDetected", "provider"),
        ("FeedSynced", "feed"),
        ("FeedProgress", "feed"),
        ("FeedFailed", "feed"),
        ("ObjectsSkipped", "feed"),
        ("NodeReadinessByLabel", "label"),
    }
)
"""Fields triage groups by: the last sweep replaces only addresses in them, never a known
name (a pod prefix that happens to equal a priority level's name leaves the level alone)."""
SA_PREFIX = "system:serviceaccount:"
SA_GROUP_PREFIX = "system:serviceaccounts:"
NODE_USER_PREFIX = "system:node:"
_GENERATED_SUFFIX = re.compile(r"^[a-z0-9]{5}$")
"""The random suffix Kubernetes appends to a generated name (``generateName``)."""
_TEMPLATE_HASH = re.compile(r"^(?=[a-z0-9]*\d)[a-z0-9]{6,10}$")
"""A ReplicaSet's pod-template hash (and a Job's timestamp of a CronJob), as in names."""
_MIN_OWNER_LEN = 4
"""Shorter prefixes (``web`` of ``web-0``) are ordinary words, not names to learn."""


class Redactor:
    """Maps real names to stand-ins, consistently for the life of one recording."""

    def __init__(self) -> None:
        self._maps: dict[str, dict[str, str]] = {}
        self._names = rt.KnownNames()
        self._known = self._names.known
        self._stand_ins: set[str] = set()
        self._label_values: dict[tuple[str, str], str] = {}
        """Redacted label values, remembered until a new name is learnt (scrapes repeat)."""

    def learn(self, events: Iterable[ev.Event]) -> None:
        """Meet every name of ``events`` first, so that free text written before a name's
        object (a message about an owner, a node named only later) is replaced too. Used
        when the whole stream is at hand (``ktop record --from FILE --redact``).
        """
        for e in events:
            self.event(e)

    def stand_in(self, kind: str, name: str) -> str:
        """The stand-in of ``name`` (e.g. ``node-3`` for the third node seen): the same
        whatever kind it is met as, and a stand-in met again (text redacted twice) is kept.
        """
        if not name or name in self._stand_ins:
            return name
        out = self._known.get(name)
        if out is None:
            m = self._maps.setdefault(kind, {})
            out = m[name] = f"{kind}-{len(m) + 1}"
            self._learn(name, out)
            if kind == "pod":
                self._learn_owners(name)
            short = name.split(".", 1)[0]
            if kind == "node" and short != name and len(short) >= _MIN_OWNER_LEN:
                self._learn(short, out)  # its short host name: the same node
        return out

    def _learn(self, name: str, out: str) -> None:
        self._names.learn(name, out)
        self._stand_ins.add(out)
        self._label_values.clear()

    def _learn_owners(self, pod: str) -> None:
        """The owners a generated pod name carries: ``api-5d4f9c-x7k2p`` is pod ``x7k2p``
        of ReplicaSet ``api-5d4f9c`` of Deployment ``api``; ``job-28391-abcde`` likewise;
        ``web-0`` of StatefulSet ``web``.
        """
        parts = pod.split("-")
        if len(parts) < 2:
            return
        last = parts[-1]
        if not (_GENERATED_SUFFIX.match(last) or last.isdigit()):
            return
        owners = ["-".join(parts[:-1])]
        if len(parts) >= 3 and _TEMPLATE_HASH.match(parts[-2]):
            owners.append("-".join(parts[:-2]))
        for owner in owners:
            if len(owner) >= _MIN_OWNER_LEN and not owner.isdigit():
                self.stand_in("owner", owner)

    def _address(self, text: str) -> str:
        dashes, text = rt.split_dashes(text)
        return dashes + (self.stand_in("server", text) if rt.is_address(text) else text)

    def _addresses_only(self, match: re.Match[str]) -> str:
        text = match.group(0)
        if ":" in text and "." not in text and not text.startswith("["):
            return self.stand_in("server", text) if rt.is_ipv6(text) else text
        return self._address(text)

    def addresses(self, text: str) -> str:
        """``text`` with every IP address and host name replaced (nothing else)."""
        if not text:
            return text
        return rt.ADDRESS_ONLY.sub(self._addresses_only, rt.LONG_WORD.sub(rt.long_word, text))

    def text(self, text: str) -> str:
        """Free text with every known name (and the names derived from an owner's), every
        user, group, named object, host name and address replaced; a word longer than any
        name (:data:`ktop.input_limits.MAX_REDACT_WORD`) is replaced whole.
        """
        if not text:
            return text
        out = self._known_names(rt.LONG_WORD.sub(rt.long_word, text))
        learnt = len(self._known)
        out = rt.IDENTIFIER.sub(self._identifier, out)
        # a name learnt from this very text (``deployment x ... x-5d4f``) is replaced before it
        return self._known_names(out) if len(self._known) > learnt else out

    def _known_names(self, text: str) -> str:
        return self._names.replace(text, self._known_name)

    def _known_name(self, base: str, extra: str) -> str:
        """A known name, or a name derived from an owner's (its ReplicaSet, its pods)."""
        if not extra:
            return self._known[base]
        if base not in self._maps.get("owner", {}):
            return base + extra
        return self.stand_in(rt.derived_kind(extra[1:].split("-")), base + extra)

    def _identifier(self, m: re.Match[str]) -> str:
        """One match of :data:`ktop.record.redact_text.IDENTIFIER`, replaced."""
        if m.group("uword") is not None:
            return self._principals(m)
        if (system := m.group("system")) is not None:
            name = system.rstrip(".:-")
            out = self.group(name) if name.count(":") == 2 else self.user(name)
            return out + system[len(name) :]
        if (email := m.group("email")) is not None:
            return self.stand_in("user", email)
        if m.group("hlabel") is not None:
            return m.group("hlabel") + m.group("hsep") + self._node(m.group("hval"))
        if m.group("kind") is not None:
            return self._named(m)
        if (ec2 := m.group("ec2")) is not None:
            return self._node(ec2)
        if (ipv6 := m.group("ipv6")) is not None:
            return self.stand_in("server", ipv6) if rt.is_ipv6(ipv6) else ipv6
        return self._address(m.group(0))

    def _principals(self, m: re.Match[str]) -> str:
        """``User "x"``, ``groups ["a" "b"]``, ``user=x``: each user or group replaced."""
        word = m.group("uword")
        sep = m.group("usep") if m.group("usep") is not None else m.group("usep2")
        value = m.group("uval") or m.group("ubare") or ""
        name_of = self.group if word.lower().startswith("group") else self.user
        if value.startswith('"'):
            return f'{word}{sep}"{name_of(value[1:-1])}"'
        return word + sep + rt.LIST_ITEM.sub(lambda i: name_of(i.group(0)), value)

    def _named(self, m: re.Match[str]) -> str:
        """An object named after its kind (``node worker-7``, ``secret "db"``)."""
        word, sep = m.group("kind"), m.group("ksep")
        kind = rt.KIND_WORDS[word.lower()]
        if (quoted := m.group("qname")) is not None:
            return f'{word}{sep}"{self.stand_in(kind, quoted)}"'
        name, ns = m.group("name"), m.group("ns")
        if ns is None and not rt.IDENTIFIER_LIKE.match(name):
            return m.group(0)  # an ordinary word or a number ("nodes are available")
        out = self.stand_in(kind, name)
        if ns is not None:
            out = f"{self.stand_in('ns', ns)}/{out}"
        return f"{word}{sep}{out}"

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

    def user(self, name: str) -> str:
        """A Kubernetes user name's stand-in that keeps its kind: a service account keeps
        its prefix with namespace and name replaced (``system:serviceaccount:ns-2:sa-1``),
        a node's user names the node's stand-in, other ``system:`` users (the control
        plane's own, ``system:anonymous``) are kept, anyone else is ``user-N``.
        """
        if name in ("", OTHERS) or (name.startswith("system:") and name.count(":") == 1):
            return name
        if name.startswith(SA_PREFIX) and name.count(":") == 3:
            ns, sa = name[len(SA_PREFIX) :].split(":")
            return f"{SA_PREFIX}{self.stand_in('ns', ns)}:{self.stand_in('sa', sa)}"
        if name.startswith(NODE_USER_PREFIX):
            return NODE_USER_PREFIX + self._node(name[len(NODE_USER_PREFIX) :])
        if name.startswith("system:"):
            return name  # a built-in identity (system:kube-controller-manager ...)
        return self.stand_in("user", name)

    def group(self, name: str) -> str:
        """A Kubernetes group's stand-in: a namespace's service accounts keep their prefix
        (``system:serviceaccounts:ns-2``), other built-in groups (``system:...``) are kept,
        any other is ``group-N``.
        """
        if name.startswith(SA_GROUP_PREFIX) and name.count(":") == 2:
            return SA_GROUP_PREFIX + self.stand_in("ns", name[len(SA_GROUP_PREFIX) :])
        if not name or name.startswith("system:"):
            return name
        return self.stand_in("group", name)

    def _talker(self, t: ev.ApfTalker) -> ev.ApfTalker:
        # A flow distinguisher is the user name (ByUser) or the namespace (ByNamespace).
        dist = t.distinguisher
        if dist and dist != t.user and ":" not in dist:
            dist = self.stand_in("ns", dist)
        else:
            dist = self.user(dist)
        return replace(t, user=self.user(t.user), distinguisher=dist)

    def _instance(self, instance: str) -> str:
        return self.stand_in("server", instance)

    def _target(self, target: ev.Target) -> ev.Target:
        return replace(target, instance=self._instance(target.instance))

    def _label_value(self, label: str, value: str) -> str:
        cache_key = (label, value)
        out = self._label_values.get(cache_key)
        if out is None:
            kind = "node" if rt.HOSTNAME_LABEL.search(label) else LABEL_KINDS.get(label)
            out = self.stand_in(kind, value) if kind else self.text(value)
            self._label_values[cache_key] = out
        return out

    def _samples(
        self, component: ev.Component, samples: Iterable[ev.Sample]
    ) -> tuple[ev.Sample, ...]:
        """The samples with only the labels the model keeps, summed as the model sums them,
        their identifying values replaced; samples of families the model ignores dropped.
        """
        summed: dict[tuple[str, ev.Labels], float] = {}
        for s in samples:
            labels = kept_labels(component, s.name, s.labels)
            if labels is None:
                continue
            labels = tuple((k, self._label_value(k, v)) for k, v in labels)
            sample_key = (s.name, labels)
            summed[sample_key] = summed.get(sample_key, 0.0) + s.value
        return tuple(ev.Sample(n, labels, v) for (n, labels), v in summed.items())

    def _sweep(self, orig: Any, new: Any, owner: str = "", field: str = "") -> Any:
        """The last sweep: every string of ``new`` that the field-by-field replacement left
        as it was in ``orig`` is redacted (addresses everywhere, known names outside
        :data:`VERBATIM_FIELDS`); what was replaced already is not touched again (free
        text redacted twice would turn ``node node-1`` into ``node node-2``).
        """
        if new is orig:
            return self._untouched(new, owner, field)
        if isinstance(new, tuple) and isinstance(orig, tuple) and len(new) == len(orig):
            return tuple(self._sweep(o, n, owner, field) for o, n in zip(orig, new, strict=True))
        if (
            dataclasses.is_dataclass(new)
            and type(new) is type(orig)
            and not isinstance(new, (type, ev.Sample))
        ):
            name = type(new).__name__
            changes = {
                f.name: self._sweep(getattr(orig, f.name), getattr(new, f.name), name, f.name)
                for f in dataclasses.fields(new)
            }
            return replace(new, **changes)
        return new

    def _untouched(self, value: Any, owner: str, field: str) -> Any:
        if isinstance(value, Enum):  # before str: a StrEnum's value is a fixed word
            return value
        if isinstance(value, str):
            if (owner, field) in VERBATIM_FIELDS:
                return self.addresses(value)
            return self.text(value)
        if isinstance(value, tuple):
            return tuple(self._untouched(v, owner, field) for v in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, (type, ev.Sample)):
            name = type(value).__name__
            changes = {
                f.name: self._untouched(getattr(value, f.name), name, f.name)
                for f in dataclasses.fields(value)
            }
            return replace(value, **changes)
        return value  # numbers, booleans, None

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
                kind = rt.KIND_WORDS.get(e.object_kind.lower(), "object")
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
                    samples=self._samples(e.target.component, e.samples),
                    parse_errors=tuple(self.text(x) for x in e.parse_errors),
                )
            case ev.ScrapeFailed() | ev.TargetGone():
                out = replace(e, target=self._target(e.target), reason=self.text(e.reason))
            case ev.ApfDumpRead() | ev.SloDayCounted():
                out = replace(e, instance=self._instance(e.instance))
            case ev.ApfDumpFailed() | ev.ApfRequestsFailed():
                out = replace(e, instance=self._instance(e.instance), reason=self.text(e.reason))
            case ev.ApfRequestsRead():
                talkers = tuple(self._talker(t) for t in e.talkers)
                out = replace(e, instance=self._instance(e.instance), talkers=talkers)
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
            case ev.NodeReadinessByLabel() if rt.HOSTNAME_LABEL.search(e.label):
                rows = tuple((self._node(v), ok, bad) for v, ok, bad in e.rows)
                out = replace(e, rows=rows)
            case (
                ev.NodeReadinessByLabel()
                | ev.ClockTick()
                | ev.FeedSynced()
                | ev.FeedProgress()
                | ev.ProviderDetected()
                | ev.LeasesSampled()
                | ev.SimPace()
            ):
                pass  # labels, zones, racks, feed names and numbers: nothing to hide
        result: ev.Event = self._sweep(e, out)
        return result
